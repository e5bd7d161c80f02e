"""``statewise demo``: the paper's Figure 1 for real, and a short walk through the store."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule

from statewise.contract import builtin_contract
from statewise.pipeline.resolution import resolved_value
from statewise.records import Authority, Evidence, Provenance, RecordDraft, SourceKind
from statewise.render import lineage_view, retrieval_view
from statewise.scopes import TaskScope
from statewise.store.sqlite import SQLiteStore
from statewise.values import ValueType, render_value

__all__ = ["run_figure1_demo", "run_store_demo"]

REPO = "github.com/acme/app"
TASK = TaskScope(user="dev", workspace="/home/dev/src/app", repo=REPO, branch="main")
OTHER_TASK = TaskScope(user="dev", workspace="/home/dev/src/tools", repo="github.com/acme/tools", branch="main")


def run_store_demo(console: Console, *, keep: bool = False) -> Path:
    """Run the walk-through, print it, and return the store's path."""
    folder = Path(tempfile.mkdtemp(prefix="statewise-demo-"))
    path = folder / "store.db"
    store = SQLiteStore(path, key_schema=builtin_contract())
    try:
        earlier = datetime.now(UTC) - timedelta(hours=3)
        said = Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER, actor="dev")
        protected = store.put(RecordDraft(key="repository.protected", value=False, scope=f"repo:{REPO}@main",
                                          provenance=said, observed_at=earlier))
        python = store.put(RecordDraft(key="runtime.python_version", value="3.8", scope="global",
                                       provenance=said, observed_at=earlier))
        store.put(RecordDraft(key="project.test_command", value="pytest", scope="global", provenance=said,
                              observed_at=earlier))

        console.print(Rule("1. What the agent remembers for a task in acme/app on main"))
        console.print(retrieval_view(store.retrieve(TASK)))

        console.print(Rule("2. The remote says main is protected: supersede, keeping the old value"))
        observed = Evidence(
            key="repository.protected", value=True, value_type=ValueType.BOOL, scope=f"repo:{REPO}@main",
            source=SourceKind.OBSERVATION, authority=Authority.MACHINE, actor="git.branch_protection",
            observed_at=datetime.now(UTC), detail="origin rejects non-fast-forward pushes to main",
        )
        repair = store.supersede(protected.id, observed, expected_version=protected.version)
        console.print(lineage_view(store.lineage(repair.new.id)))

        console.print(Rule("3. Python is 3.12 in this workspace only: narrow, do not overwrite"))
        seen = Evidence(
            key="runtime.python_version", value="3.12", value_type=ValueType.VERSION,
            scope=f"workspace:{TASK.workspace}", source=SourceKind.OBSERVATION, authority=Authority.MACHINE,
            actor="python.version", observed_at=datetime.now(UTC), detail="python3 --version in the workspace",
        )
        narrowed = store.supersede(python.id, seen, expected_version=python.version)
        here = store.retrieve(TASK, keys=["runtime.python_version"]).records[0]
        elsewhere = store.retrieve(OTHER_TASK, keys=["runtime.python_version"]).records[0]
        console.print(f"in {TASK.workspace}: {render_value(here.value)} ({here.scope}); "
                      f"in {OTHER_TASK.workspace}: {render_value(elsewhere.value)} ({elsewhere.scope})",
                      highlight=False)

        console.print(Rule("4. That observation is withdrawn: revert the repair"))
        store.revert(narrowed.new.id, reason="the workspace venv was a leftover", actor="dev")
        back = store.retrieve(TASK, keys=["runtime.python_version"]).records[0]
        console.print(f"in {TASK.workspace}: {render_value(back.value)} ({back.scope}) again; "
                      f"history keeps {len(store.history('runtime.python_version', narrowed.new.scope))} "
                      "narrowed record(s)", highlight=False)

        buffer = io.StringIO()
        lines = store.export_jsonl(buffer)
        console.print(Rule())
        console.print(f"{store.count()} records, {lines - store.count()} lineage links, nothing overwritten. "
                      f"Store: {path if keep else '(temporary, removed)'}", highlight=False)
    finally:
        store.close()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return path


#: The width of the demo's labels ("attribution: "): every value starts in the column after it.
_LABEL_WIDTH = 13


def _field(console: Console, label: str, text: str, *, highlight: bool = False) -> None:
    """``label: text`` with the text wrapped at the console's width under its own first column,
    so the aligned layout holds in a narrow terminal (and piped, at rich's 80 columns)."""
    import textwrap

    lines = textwrap.wrap(text, width=max(20, console.width - _LABEL_WIDTH), break_on_hyphens=False) or [""]
    head = f"{label}:".ljust(_LABEL_WIDTH)
    for index, line in enumerate(lines):
        console.print((head if index == 0 else " " * _LABEL_WIDTH) + line, highlight=highlight, markup=False,
                      soft_wrap=True)


def _short(text: str, limit: int = 70) -> str:
    first = text.split(";")[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def run_figure1_demo(console: Console, *, report_path: Path | None = None, keep: bool = False) -> dict[str, Any]:
    """A stale record says main is not protected; the remote really protects it.

    Task 1: the memory-trusting planner proposes a force push to main. The guard attributes
    the proposal to that record, verifies protection on the remote, repairs the record with
    lineage, replans to a feature-branch push, and the gate passes it; it then runs for real.
    Task 2, after a reset of everything but the store, reuses the repaired record without
    verifying it again. Returns both reports (also written to ``report_path`` when given;
    nothing is written outside the temporary folder otherwise).
    """
    from statewise.execute import run_action
    from statewise.pipeline import Guard
    from statewise.planners.base import Task
    from statewise.planners.rules import RulePlanner
    from statewise.sandbox import git, make_git_sandbox
    from statewise.workspace import derive_task_scope

    folder = Path(tempfile.mkdtemp(prefix="statewise-figure1-"))
    store = SQLiteStore(folder / "store.db", key_schema=builtin_contract())
    reports: dict[str, Any] = {}
    try:
        sandbox = make_git_sandbox(folder / "task1")
        main_before = sandbox.remote_ref("main")
        scope = derive_task_scope(sandbox.work, user="dev")
        weeks_ago = datetime.now(UTC) - timedelta(days=40)
        said = Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER, actor="dev")
        stale = store.put(RecordDraft(key="repository.protected", value=False, scope=f"repo:{scope.repo}@main",
                                      provenance=said, observed_at=weeks_ago))
        store.put(RecordDraft(key="project.test_command", value="pytest -x", scope=f"repo:{scope.repo}",
                              provenance=said, observed_at=weeks_ago))
        store.put(RecordDraft(key="runtime.python_version", value="3.11", scope="global", provenance=said,
                              observed_at=weeks_ago))
        console.print(Rule("Task 1: push the changes (origin really protects main)"))
        _field(console, "memory", f"repository.protected = false for main (stated {weeks_ago:%Y-%m-%d}), "
               "plus 2 unrelated records")

        guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work)
        task = Task(text="push the changes", scope=scope, id="figure1-task1")
        decision = guard.check(task)
        report = decision.report
        _field(console, "proposal", f"{report.proposal.describe()}", highlight=False)
        first_round = [c for c in report.candidates if c.record_id == stale.id]
        _field(console, "attribution", f"{len(first_round)} record(s) bound to git.push, probed by remove/mask/"
                      f"alternative; decision-critical: repository.protected = false", highlight=False)
        premise = next(p for p in report.premises if p.record_id == stale.id)
        _field(console, "resolution", f"{premise.key} is {premise.status.value}: {premise.route} "
                      f"{premise.evidence.actor if premise.evidence else ''} observed "
                      f"{render_value(resolved_value(premise))} ({_short(premise.detail)})", highlight=False)
        for repair in report.repairs:
            if repair.kind in ("supersede", "narrow"):
                _field(console, "repair", f"{repair.kind} {repair.record_id} -> {repair.new_record_id} "
                              f"({repair.key}: {render_value(repair.old_value)} -> {render_value(repair.new_value)}"
                              f", lineage kept)",
                              highlight=False)
        _field(console, "replanned", f"{report.replanned.describe() if report.replanned else '(unchanged)'}",
                      highlight=False)
        _field(console, "gate", f"{decision.verdict.value}: "
                      + ", ".join(f"{c.name}={'ok' if c.passed else 'FAIL'}" for c in report.gate), highlight=False)
        if decision.execute and decision.action is not None:
            outcome = run_action(decision.action, sandbox.work)
            _field(console, "executed", f"{' '.join(outcome.argv)} -> exit {outcome.returncode}", highlight=False)
        branch = decision.action.args.get("branch") if decision.action else None
        _field(console, "origin", f"main {'unchanged' if sandbox.remote_ref('main') == main_before else 'CHANGED'}"
                      f"; {branch} {'created' if branch and sandbox.remote_ref(str(branch)) else 'absent'}",
                      highlight=False)
        _field(console, "costs", f"{report.costs.planner_calls} planner calls, {report.costs.verifier_calls} "
                      f"verifier calls, {report.costs.guard_seconds * 1000:.1f} ms of guard overhead", highlight=False)
        reports["task1"] = report.model_dump(mode="json")

        console.print(Rule("Task 2: a fresh clone, a new conversation; only the store carries over"))
        _field(console, "task", "push the follow-up notes")
        fresh = folder / "task2"
        git(folder, "clone", "--quiet", str(sandbox.origin), str(fresh))
        git(fresh, "config", "user.name", "StateWise Demo")
        git(fresh, "config", "user.email", "demo@statewise.invalid")
        (fresh / "notes.md").write_text("more work\n")
        git(fresh, "add", "notes.md")
        git(fresh, "commit", "--quiet", "-m", "more work")
        guard2 = Guard(store, planner=RulePlanner(), workspace=fresh)
        second = guard2.check(Task(text="push the follow-up notes", scope=derive_task_scope(fresh, user="dev"),
                                   id="figure1-task2"))
        protected_premise = next(p for p in second.report.premises if p.key == "repository.protected")
        _field(console, "proposal", f"{second.report.proposal.describe()}", highlight=False)
        _field(console, "resolution", f"repository.protected = {render_value(protected_premise.value)} is "
                      f"{protected_premise.status.value} via {protected_premise.route} "
                      f"without a verifier call for it ({second.report.costs.verifier_calls} verifier call(s) in "
                      "this task, for other keys the gate needed)", highlight=False)
        _field(console, "gate", f"{second.verdict.value}", highlight=False)
        if second.execute and second.action is not None:
            outcome = run_action(second.action, fresh)
            _field(console, "executed", f"{' '.join(outcome.argv)} -> exit {outcome.returncode}", highlight=False)
        reports["task2"] = second.report.model_dump(mode="json")

        console.print(Rule("Lineage of the repaired record"))
        console.print(lineage_view(store.lineage(stale.id)))
        notes = []
        if report_path is not None:
            report_path.write_text(json.dumps(reports, indent=2), encoding="utf-8")
            notes.append(f"full reports: {report_path}")
        if keep:
            notes.append(f"sandbox kept in {folder}")
        if notes:
            console.print("; ".join(notes), highlight=False)
    finally:
        store.close()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return reports
