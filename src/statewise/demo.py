"""``statewise demo``: a short, real walk through the store on a temporary SQLite file."""

from __future__ import annotations

import io
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from statewise.contract import builtin_contract
from statewise.records import Evidence, Provenance, RecordDraft
from statewise.render import lineage_view, retrieval_view
from statewise.scopes import TaskScope
from statewise.store.sqlite import SQLiteStore

__all__ = ["run_store_demo"]

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
        said = Provenance(source="developer", authority="developer", actor="dev")
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
            key="repository.protected", value=True, value_type="bool", scope=f"repo:{REPO}@main",
            source="observation", authority="machine", actor="git.branch_protection",
            observed_at=datetime.now(UTC), detail="origin rejects non-fast-forward pushes to main",
        )
        repair = store.supersede(protected.id, observed, expected_version=protected.version)
        console.print(lineage_view(store.lineage(repair.new.id)))

        console.print(Rule("3. Python is 3.12 in this workspace only: narrow, do not overwrite"))
        seen = Evidence(
            key="runtime.python_version", value="3.12", value_type="version", scope=f"workspace:{TASK.workspace}",
            source="observation", authority="machine", actor="python.version", observed_at=datetime.now(UTC),
            detail="python3 --version in the workspace",
        )
        narrowed = store.supersede(python.id, seen, expected_version=python.version)
        here = store.retrieve(TASK, keys=["runtime.python_version"]).records[0]
        elsewhere = store.retrieve(OTHER_TASK, keys=["runtime.python_version"]).records[0]
        console.print(f"in {TASK.workspace}: {here.value} ({here.scope}); "
                      f"in {OTHER_TASK.workspace}: {elsewhere.value} ({elsewhere.scope})", highlight=False)

        console.print(Rule("4. That observation is withdrawn: revert the repair"))
        store.revert(narrowed.new.id, reason="the workspace venv was a leftover", actor="dev")
        back = store.retrieve(TASK, keys=["runtime.python_version"]).records[0]
        console.print(f"in {TASK.workspace}: {back.value} ({back.scope}) again; "
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
