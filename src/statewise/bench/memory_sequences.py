"""Four-task sequences whose wrong record lives in an agent's memory file (issue 12, RQ5).

Each case (``benchmarks/cases/memory_sequences/sequences/*.yaml``, :class:`MemorySequence`)
is a workspace whose memory file (``AGENTS.md``, ``CLAUDE.md``, ``GEMINI.md``, a Cursor rule,
or Claude Code's auto memory ``MEMORY.md``) holds one wrong line, and four tasks that all
depend on it. Between tasks the workspace is rebuilt from its template and the conversation
is reset; what persists is what persists for a real agent: its memory files (as the
previous task left them) and StateWise's store. A later task can only get the correction
through the file (a write-back) or the session-start injection.

The simulated agent is the rule planner (the built-in playbook: an agent that acts on what
its memory says). Each task it starts a session: it reads its memory files (the same typed
facts ``statewise memory import`` extracts, imported into a scratch store that is the
agent's context, not StateWise's), then reads what the session start told it with the
general feedback reader (:func:`statewise.planners.base.read_corrections`), plans, and the
action runs in the sandbox and is judged by the case's checks.

Methods (:data:`MEMORY_METHODS`):

* ``agent``: no StateWise; the agent plans from its files.
* ``never``: StateWise's ``SessionStart`` hook (what ``statewise install`` registers) injects
  the repaired state; write-back policy ``never``, so the file keeps its wrong line; no
  ``PreToolUse`` guard: the injection is the only channel.
* ``auto``: the same injection, then write-back with policy ``auto``: the agent's own memory
  is rewritten silently, a developer's file only if the (simulated) developer approves the
  edit (``memory.edit`` in the case's ``developer.approves``, or ``all``).
* ``hook``: :class:`statewise.bench.hookmode.HookMethod` (SessionStart injection and the
  ``PreToolUse``/``PostToolUse`` hooks, a deny read back as feedback), planning from the
  agent's files; no write-back. (A developer's answer that the hook's prompt turns into a
  record goes to the agent's scratch context here; in these cases the developer only confirms.)
* ``never_then_bare``, ``auto_then_bare``: ``never`` or ``auto`` in the first task, and the
  later tasks in sessions without StateWise (another client, a teammate's checkout, CI):
  only what was written into the file reaches them.

Metrics are the paper's RQ5 ones, computed by :func:`statewise.bench.metrics.sequence_metrics`
over the episodes: T1, T2+, AFS (all later tasks correct and safe) and R. Here R is the share
of later contexts (tasks 2-4) in which the corrected value reached the agent's session-start
context, from the file or from the injection; the episode's report says which
(``via_file``, ``via_injection``). The harness measures it from the files as the task found
them and from the session-start text; the method's decision never sees it.

Run: ``python -m statewise.bench.memory_sequences`` (``--json FILE``, ``--methods``, ``--only``, ``--jobs``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from statewise.actions import Action
from statewise.bench.case import DeveloperSpec, SequenceTask, WorkspaceSpec, fill_placeholders
from statewise.bench.checks import JudgeContext
from statewise.bench.executor import BenchExecutor, UnsupportedByBench
from statewise.bench.methods import MethodInput, MethodResult, WithoutBasis, planning_context
from statewise.bench.metrics import sequence_metrics
from statewise.bench.runner import Episode, build_planner
from statewise.bench.sandbox import Sandbox, SandboxError, TemplateCache, instantiate
from statewise.contract import Contract, builtin_contract
from statewise.limits import MAX_CASE_BYTES, read_capped
from statewise.memory.check import check_memory
from statewise.memory.discovery import claude_project_folder
from statewise.memory.importer import import_memory, read_lines
from statewise.memory.writeback import Edit, WriteBackPolicy, apply_edits, propose_edits
from statewise.planners.base import Planner, Statement, Task, as_plan, read_corrections
from statewise.planners.rules import Playbook, builtin_playbook, load_playbook
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

__all__ = [
    "AUTO_MEMORY",
    "MEMORY_METHODS",
    "MemoryFileSpec",
    "MemorySequence",
    "MemoryTarget",
    "default_sequences_dir",
    "load_memory_sequences",
    "main",
    "run_memory_sequence",
    "run_memory_sequences",
    "summarize",
]

#: The ``memory.file`` value naming Claude Code's auto memory (``~/.claude/projects/<project>/memory/MEMORY.md``).
AUTO_MEMORY = "auto"
#: The compared methods, in report order.
MEMORY_METHODS = ("agent", "never", "auto", "hook", "never_then_bare", "auto_then_bare")
#: ``X_then_bare``: method X in the first task only; tasks 2-4 run in sessions without StateWise.
_BARE_LATER = {"never_then_bare": "never", "auto_then_bare": "auto"}
#: The operation name a developer approves to let StateWise edit their memory file.
EDIT_APPROVAL = "memory.edit"
SET_NAME = "memory_sequences"
CONDITION = "memory_file"  # the episodes' condition: the wrong record is in a memory file
_SOURCE = "statewise-session"  # the source of what the agent reads from the session start


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MemoryFileSpec(_Model):
    """The memory file that holds the wrong line."""

    file: str = Field(min_length=1, description="a path relative to the workspace, or 'auto' (Claude's auto memory)")
    text: str = Field(min_length=1, description="the file's content as the first task finds it")


class MemoryTarget(_Model):
    """The wrong fact: its key, the value the file states, the value the workspace has."""

    key: str = Field(min_length=3)
    wrong: Any
    correct: Any
    line: int = Field(ge=1, description="the 1-based line of the memory file that states the wrong value")


class MemorySequence(_Model):
    """One memory sequence case (see the module docstring)."""

    kind: Literal["memory_sequence"]
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    category: str = Field(min_length=1)
    memory: MemoryFileSpec
    target: MemoryTarget
    workspace: WorkspaceSpec
    developer: DeveloperSpec = Field(default_factory=DeveloperSpec)
    tasks: list[SequenceTask] = Field(min_length=4, max_length=4)
    tags: list[str] = Field(default_factory=list)
    notes: str = ""

    def full_workspace(self) -> WorkspaceSpec:
        """The workspace with the memory file in it (committed, when the workspace is a git
        repository), unless it is the auto memory, which lives in the sandbox's HOME."""
        if self.memory.file == AUTO_MEMORY:
            return self.workspace
        return self.workspace.model_copy(update={"files": {**self.workspace.files, self.memory.file: self.memory.text}})


def default_sequences_dir() -> Path:
    """``benchmarks/cases/memory_sequences`` of the working directory, else of the source tree."""
    here = Path.cwd() / "benchmarks" / "cases" / SET_NAME
    return here if here.is_dir() else Path(__file__).resolve().parents[3] / "benchmarks" / "cases" / SET_NAME


def load_memory_sequences(directory: str | Path | None = None) -> tuple[list[MemorySequence], Playbook]:
    """Every ``sequences/*.yaml`` case of ``directory`` (sorted by file name) and the playbook:
    the built-in one extended by ``sequences/playbook.yaml`` when present. A case that does not
    validate, or whose line does not state its target, raises ValueError naming the file."""
    folder = Path(directory or default_sequences_dir()) / "sequences"
    cases: list[MemorySequence] = []
    playbook = builtin_playbook()
    for path in sorted(folder.glob("*.yaml")):
        if path.name == "playbook.yaml":
            playbook = playbook.extend(load_playbook(path))
            continue
        try:
            text = read_capped(path, MAX_CASE_BYTES, "a case file").decode("utf-8")
            case = MemorySequence.model_validate(yaml.safe_load(text))
        except (ValidationError, yaml.YAMLError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: {error}") from None
        lines = case.memory.text.splitlines()
        if case.target.line > len(lines):
            raise ValueError(f"{path}: target.line {case.target.line} is past the end of the memory file")
        cases.append(case)
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{folder}: case ids repeat")
    for case in cases:
        for index, step in enumerate(case.tasks):
            if step.family not in playbook.families:
                raise ValueError(f"{case.id}: tasks[{index}]: unknown playbook family {step.family!r}")
    return cases, playbook


# --- the agent's session -----------------------------------------------------------------


def _memory_path(case: MemorySequence, sandbox: Sandbox) -> Path:
    if case.memory.file == AUTO_MEMORY:
        return sandbox.home / ".claude" / "projects" / claude_project_folder(sandbox.work) / "memory" / "MEMORY.md"
    return sandbox.work / case.memory.file


@contextmanager
def _environment(environ: Mapping[str, str]) -> Iterator[None]:
    """The sandbox's environment (HOME, PATH) for in-process StateWise calls, as the hook
    subprocess a client starts would have; restored after."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _file_context(workspace: Path, home: Path, contract: Contract, folder: Path, task: Task) -> SQLiteStore:
    """The agent's reading of its memory files: their typed facts in a fresh scratch store
    (a conversation starts empty; only the files are read again)."""
    path = folder / f"agent-{time.monotonic_ns()}.db"
    store = SQLiteStore(path, key_schema=contract)
    import_memory(workspace, store, contract, home=home, task=derive_task_scope(workspace, user=task.scope.user))
    return store


def _file_value(workspace: Path, home: Path, contract: Contract, key: str) -> Any:
    """The first value the memory files state for ``key`` (None: none), as the agent reads it."""
    from statewise.memory.discovery import discover_memory_files

    task = derive_task_scope(workspace)
    for line in read_lines(discover_memory_files(workspace, home=home, task=task), contract, task):
        for fact in line.facts:
            if fact.key == key:
                return fact.value
    return None


def _session_start(agent_env: Mapping[str, str], work: Path, store_location: str, session: str) -> str:
    """What StateWise's SessionStart hook tells the agent (the ``additionalContext``)."""
    from statewise.integrations.hooks import run_hook

    payload = {"cwd": str(work), "session_id": session, "transcript_path": "", "hook_event_name": "SessionStart",
               "source": "startup"}
    with _environment(agent_env):
        outcome = run_hook("claude-code", json.dumps(payload), event="session", store_location=store_location)
    try:
        data = json.loads(outcome.stdout or "{}")
    except json.JSONDecodeError:
        return ""
    specific = (data.get("hookSpecificOutput") or {}) if isinstance(data, dict) else {}
    return str(specific.get("additionalContext") or "")


def _write_back(sandbox: Sandbox, store_location: str, contract: Contract, developer: DeveloperSpec,
                policy: WriteBackPolicy) -> list[dict[str, Any]]:
    """``statewise memory check --apply`` with ``policy``: the developer approves an edit of
    their file when they approve ``memory.edit``."""
    asked: list[Edit] = []

    def approve(edit: Edit) -> bool:
        asked.append(edit)  # each question is a developer interaction
        return developer.approves == "all" or EDIT_APPROVAL in developer.approves

    with _environment(sandbox.env), SQLiteStore(store_location, key_schema=contract) as store:
        import_memory(sandbox.work, store, contract, home=sandbox.home)
        report = check_memory(sandbox.work, contract, store=store, home=sandbox.home, environ=sandbox.env)
        results = apply_edits(propose_edits(report), policy, store=store, approve=approve)
    return [{"file": r.edit.file.relpath, "line": r.edit.line, "old": r.edit.old, "new": r.edit.new,
             "applied": r.applied, "reason": r.reason, "asked": r.edit in asked} for r in results]


@dataclass(frozen=True)
class _Outcome:
    result: MethodResult
    injected: str  # the session-start text the agent read ("" for the agent)


def _decide(method: str, inp: MethodInput, sandbox: Sandbox, agent_store: SQLiteStore, store_location: str,
            session: str, index: int = 0) -> _Outcome:
    if method in _BARE_LATER:
        method = _BARE_LATER[method] if index == 0 else "agent"
    if method == "hook":
        from statewise.bench.hookmode import HookMethod

        result = HookMethod().run(inp)
        calls = (result.report or {}).get("calls") or []
        first = calls[0] if calls and calls[0].get("event") == "SessionStart" else None
        injected = ""
        if first is not None:
            try:
                injected = str(((json.loads(first["stdout"] or "{}").get("hookSpecificOutput") or {})
                                .get("additionalContext")) or "")
            except (json.JSONDecodeError, AttributeError):
                injected = ""
        return _Outcome(result, injected)
    told: list[Statement] = []
    injected = ""
    report: dict[str, Any] = {"mode": method, "statewise": method != "agent"}
    if method in ("never", "auto"):
        injected = _session_start(sandbox.env, sandbox.work, store_location, session)
        told = list(read_corrections(injected, _SOURCE))
        report["told"] = [{"key": s.key, "value": s.value} for s in told]
    if method == "auto":
        report["edits"] = _write_back(sandbox, store_location, inp.contract, inp.developer, WriteBackPolicy.AUTO)
    plan = as_plan(inp.planner.plan(inp.task, planning_context(agent_store, inp.task).told(told)))
    tokens = plan.usage.input_tokens + plan.usage.output_tokens if plan.usage else 0
    asked = sum(1 for edit in report.get("edits", []) if edit["asked"])
    result = MethodResult.from_proposal(plan.action, model_calls=1, tokens=tokens, approvals=asked)
    result.report = report
    return _Outcome(result, injected)


def _action(action: Action | None) -> dict[str, Any] | None:
    return action.model_dump(mode="json", exclude_none=True) if action is not None else None


def run_memory_sequence(case: MemorySequence, method: str, *, playbook: Playbook | None = None,
                        contract: Contract | None = None, planner: str = "rules", seed: int = 0,
                        workdir: Path | None = None) -> list[Episode]:
    """Run the four tasks of ``case`` with ``method``; one Episode per task (see the module docstring)."""
    if method not in MEMORY_METHODS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(MEMORY_METHODS)}")
    contract = contract or builtin_contract()
    planner_obj: Planner = build_planner(planner, playbook or builtin_playbook(), seed=seed)
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="statewise-memseq-")) if workdir is None else workdir
    folder = root / f"ms-{case.id}-{method}-{os.getpid()}-{time.monotonic_ns()}"
    templates = TemplateCache(root / "templates")
    spec = case.full_workspace()
    store_location = str(folder / "statewise.db")
    memory_text: str | None = case.memory.text
    episodes: list[Episode] = []
    try:
        folder.mkdir(parents=True)
        for index, step in enumerate(case.tasks):
            started = time.perf_counter()
            base: dict[str, Any] = dict(case=f"{case.id}/{step.id}", set=SET_NAME, condition=CONDITION,
                                        method=method, planner=planner, seed=seed, category=case.category,
                                        defect="memory_file", expected=step.expected, sequence=case.id, step=index,
                                        tags=list(case.tags))
            sandbox_dir = folder / "sandbox"
            try:
                if sandbox_dir.exists():
                    shutil.rmtree(sandbox_dir)
                sandbox = instantiate(templates.template(spec), sandbox_dir, spec)
            except (SandboxError, OSError) as error:
                episodes.append(Episode(**base, judged=False, unjudged_reason=f"sandbox: {error}"))
                continue
            # The reset keeps what persists: the memory file as the previous task left it.
            memory_path = _memory_path(case, sandbox)
            memory_path.parent.mkdir(parents=True, exist_ok=True)
            if memory_text is not None:
                memory_path.write_text(memory_text, encoding="utf-8")
            episodes.append(_run_task(case, step, index, sandbox, contract, planner_obj, method, seed, base,
                                      started, folder, store_location))
            memory_text = memory_path.read_text(encoding="utf-8") if memory_path.exists() else None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if own:
            shutil.rmtree(root, ignore_errors=True)
    return episodes


def _run_task(case: MemorySequence, step: SequenceTask, index: int, sandbox: Sandbox, contract: Contract,
              planner: Planner, method: str, seed: int, base: dict[str, Any], started: float, folder: Path,
              store_location: str) -> Episode:
    values = sandbox.placeholders()
    scope = derive_task_scope(sandbox.work, user=case.workspace.user)
    task = Task(text=step.task.text, scope=scope, family=step.family, workspace=str(sandbox.work),
                id=f"{case.id}/{step.id}", params=fill_placeholders(dict(step.task.params), values))
    developer = step.developer or case.developer
    developer = DeveloperSpec(intent=fill_placeholders(dict(developer.intent), values), approves=developer.approves)
    # Measured by the harness, before the agent acts: what the files say as this task begins.
    with _environment(sandbox.env):
        file_value = _file_value(sandbox.work, sandbox.home, contract, case.target.key)
    judge = JudgeContext(root=sandbox.root, work=sandbox.work, origin=sandbox.origin,
                         fill=lambda text: fill_placeholders(text, values))
    checks: list[Any] = list(step.goal) + list(step.invariants)
    try:
        for number, check in enumerate(checks):
            judge.before[number] = check.prepare(judge)
    except Exception as error:  # noqa: BLE001 - a check that cannot prepare leaves the episode unjudged
        return Episode(**base, judged=False, unjudged_reason=f"preparing the checks: {error}")
    executor = BenchExecutor(sandbox)
    with _environment(sandbox.env):
        agent_store = _file_context(sandbox.work, sandbox.home, contract, folder, task)
    error_text: str | None = None
    try:
        inp = MethodInput(task=task, store=agent_store, contract=contract, planner=WithoutBasis(planner),
                          workspace=sandbox.work, environ=sandbox.env, developer=developer, seed=seed,
                          execute=executor.run, store_location=store_location, contract_path=None)
        outcome = _decide(method, inp, sandbox, agent_store, store_location, f"memseq-{case.id}-{index}", index)
        result, injected = outcome.result, outcome.injected
    except UnsupportedByBench as error:
        agent_store.close()
        return Episode(**base, judged=False, unjudged_reason=str(error))
    except Exception as error:  # noqa: BLE001 - a method that crashes is a failure, counted
        error_text = f"method {method} raised {type(error).__name__}: {error}"
        result, injected = MethodResult(verdict="error", action=None, reason=error_text), ""
    finally:
        agent_store.close()
    if result.verdict == "execute" and result.action is not None and not result.executed:
        try:
            executor.run(result.action)
        except Exception as error:  # noqa: BLE001 - the bench could not execute: unjudged
            return Episode(**base, judged=False, unjudged_reason=f"executing: {type(error).__name__}: {error}",
                           commands=[c.to_dict() for c in executor.log])
    judge.commands = list(executor.log)
    try:
        outcomes = [check.judge(judge, judge.before[number]) for number, check in enumerate(checks)]
    except Exception as error:  # noqa: BLE001
        return Episode(**base, judged=False, unjudged_reason=f"judging: {type(error).__name__}: {error}",
                       commands=[c.to_dict() for c in executor.log])
    goal, invariants = outcomes[: len(step.goal)], outcomes[len(step.goal):]
    holds = all(o.passed for o in invariants)
    told = {s.key: s.value for s in read_corrections(injected, _SOURCE)}
    via_file = file_value == case.target.correct
    via_injection = told.get(case.target.key, object()) == case.target.correct
    seen = told[case.target.key] if case.target.key in told else file_value
    report = dict(result.report or {})
    report.update(file_value=file_value, injected=injected, via_file=via_file, via_injection=via_injection)
    return Episode(
        **base, y=error_text is None and all(o.passed for o in goal) and holds, v=not holds, error=error_text,
        goal=[o.to_dict() for o in goal], invariants=[o.to_dict() for o in invariants],
        commands=[c.to_dict() for c in executor.log], verdict=result.verdict, proposal=_action(result.proposal),
        action=_action(result.action), reason=result.reason, model_calls=result.model_calls, tokens=result.tokens,
        questions=result.questions, approvals=result.approvals, hook_latencies=list(result.hook_latencies),
        repaired_retrieved=(seen == case.target.correct) if index > 0 else None,
        wall_seconds=round(time.perf_counter() - started, 4), report=report,
    )


# --- the whole set ------------------------------------------------------------------------


def _job(args: tuple[MemorySequence, str, str, int, str]) -> list[dict[str, Any]]:
    case, method, directory, seed, workdir = args
    _, playbook = load_memory_sequences(directory)
    return [e.to_dict() for e in run_memory_sequence(case, method, playbook=playbook, seed=seed,
                                                     workdir=Path(workdir))]


def run_memory_sequences(directory: str | Path | None = None, *, methods: Sequence[str] = MEMORY_METHODS,
                         only: Sequence[str] | None = None, jobs: int = 2, seed: int = 0) -> list[Episode]:
    """Every (case, method) of the set, in order, over ``jobs`` processes."""
    directory = str(directory or default_sequences_dir())
    cases, _ = load_memory_sequences(directory)
    if only:
        missing = sorted(set(only) - {c.id for c in cases})
        if missing:
            raise ValueError(f"no memory sequence {', '.join(missing)}")
        cases = [c for c in cases if c.id in only]
    workdir = tempfile.mkdtemp(prefix="statewise-memseq-run-")
    work = [(case, method, directory, seed, workdir) for case in cases for method in methods]
    try:
        # Every template is built here, once: worker processes only copy them (the cache's
        # lock is per process, so two workers building one template would collide).
        templates = TemplateCache(Path(workdir) / "templates")
        for case in cases:
            try:
                templates.template(case.full_workspace())
            except SandboxError:
                pass  # its episodes are unjudged, with the reason
        if jobs <= 1:
            results = [_job(item) for item in work]
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                results = list(pool.map(_job, work))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return [Episode.from_dict(e) for batch in results for e in batch]


def summarize(episodes: Sequence[Episode | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per method (in :data:`MEMORY_METHODS` order): T1, T2+, AFS, R (the paper's RQ5 figures,
    :func:`statewise.bench.metrics.sequence_metrics`), how the correction reached later tasks
    (file, injection), and the unjudged episodes."""
    def get(e: Any, name: str) -> Any:
        return e[name] if isinstance(e, Mapping) else getattr(e, name)

    rows = []
    names = list(dict.fromkeys([*[m for m in MEMORY_METHODS if any(get(e, "method") == m for e in episodes)],
                                *[get(e, "method") for e in episodes]]))
    for name in names:
        group = [e for e in episodes if get(e, "method") == name]
        later = [e for e in group if get(e, "step") > 0 and get(e, "judged")]
        row: dict[str, Any] = {"method": name, **sequence_metrics(group)}
        reports = [get(e, "report") or {} for e in later]
        row["via_file"] = sum(bool(r.get("via_file")) for r in reports) / len(reports) if reports else None
        row["via_injection"] = sum(bool(r.get("via_injection")) for r in reports) / len(reports) if reports else None
        judged = [e for e in group if get(e, "judged")]
        # Developer interactions per task (the hook's permission prompts and questions).
        row["IC"] = (sum(get(e, "questions") + get(e, "approvals") for e in judged) / len(judged)) if judged else None
        row["unjudged_episodes"] = sum(not get(e, "judged") for e in group)
        row["episodes"] = len(group)
        rows.append(row)
    return rows


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def render_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary as a Markdown table (percentages)."""
    out = ["| Method | Sequences | T1 | T2-T4 | AFS | R | later tasks told by the file | by the injection | "
           "developer interactions per task | unjudged |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['method']} | {r['sequences']} | {_percent(r['T1'])} | {_percent(r['T2+'])} | "
                   f"{_percent(r['AFS'])} | {_percent(r['R'])} | {_percent(r['via_file'])} | "
                   f"{_percent(r['via_injection'])} | {'n/a' if r['IC'] is None else format(r['IC'], '.2f')} | "
                   f"{r['unjudged_episodes']} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m statewise.bench.memory_sequences``: run the set, print the table."""
    parser = argparse.ArgumentParser(prog="python -m statewise.bench.memory_sequences", description=__doc__.split("\n")[0])
    parser.add_argument("--cases", help="the memory_sequences folder (default: benchmarks/cases/memory_sequences)")
    parser.add_argument("--methods", default=",".join(MEMORY_METHODS), help="comma-separated, of " + ", ".join(MEMORY_METHODS))
    parser.add_argument("--only", help="comma-separated sequence ids")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", dest="json_path", help="write every episode and the summary here")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    unknown = [m for m in methods if m not in MEMORY_METHODS]
    if unknown:
        parser.error(f"unknown method(s) {', '.join(unknown)}")
    started = time.perf_counter()
    episodes = run_memory_sequences(args.cases, methods=methods, only=args.only.split(",") if args.only else None,
                                    jobs=args.jobs)
    rows = summarize(episodes)
    print(render_table(rows))
    print(f"\n{len(episodes)} episodes in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"format": "statewise-memory-sequences/1", "summary": rows,
                                                    "episodes": [e.to_dict() for e in episodes]}, indent=1,
                                                   default=str), encoding="utf-8")
    return 0 if all(r["unjudged_episodes"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
