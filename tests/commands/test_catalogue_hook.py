"""The bypass catalogue through the real hook entry point (issue 11, "the tests report").

Every catalogue entry that must be stopped, or at least checked, is sent to
``run_hook("claude-code", ...)`` as Claude Code sends a Bash call, in the catalogue's
repository, with a real store holding the developer's protected paths. Each outcome is one of:

* denied: the hook answered ``deny``;
* asked: the hook answered ``ask`` (a premise the developer must settle);
* examined: the hook let it run after the guard checked its actions against the contract;
* unexamined: the hook let it run without checking anything.

A FAIL_CLOSED entry must be denied; a CASES entry with actions must not be unexamined (that is
a command the normalizer lost). The counts are printed as one summary line. READ_ONLY entries,
ordinary work, must pass unexamined and never be denied.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from statewise.commands import analyze_command
from statewise.contract import builtin_contract
from statewise.integrations.hooks import SHELL_TOOL_ENV, run_hook
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope
from tests.commands.bypass_cases import CASES
from tests.commands.bypass_lists import FAIL_CLOSED, READ_ONLY
from tests.commands.test_bypasses import fill, world  # noqa: F401  (the module-scoped fixture)

DEV = Provenance(source="developer", authority="developer", actor="dev")


@pytest.fixture(scope="module")
def store(world: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> str:  # noqa: F811
    location = str(tmp_path_factory.mktemp("hookstore") / "store.db")
    scope = derive_task_scope(world["repo"])
    opened = SQLiteStore(location, key_schema=builtin_contract())
    try:
        opened.put(RecordDraft(key="fs.protected_paths", value=[".env", ".git", "setup.cfg"],
                               scope=f"repo:{scope.repo}", provenance=DEV))
    finally:
        opened.close()
    return location


def outcome(world: dict[str, Path], store: str, command: str, agent: str = "claude-code") -> str:  # noqa: F811
    payload = {"session_id": "catalogue", "transcript_path": "/dev/null", "cwd": str(world["repo"]),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "catalogue"}, "tool_use_id": "t"}
    result = run_hook(agent, json.dumps(payload), store_location=store)
    decision = json.loads(result.stdout).get("hookSpecificOutput", {}).get("permissionDecision")
    if decision == "deny":
        return "denied"
    if decision == "ask":
        return "asked"
    return "examined" if result.decisions else "unexamined"


def test_every_must_stop_entry_is_examined_through_the_hook(world, store, capsys):  # noqa: F811
    counts: Counter[str] = Counter()
    failures: list[str] = []
    for command in FAIL_CLOSED:
        # Claude Code's Bash tool runs with GIT_EDITOR=true (SHELL_TOOL_ENV), so an entry that
        # fails closed only because git would open an editor (`git commit` without -m) opens
        # none there; it is checked as Codex sends it, where the editor does open.
        quiet_editor = {**os.environ, **SHELL_TOOL_ENV["claude-code"]}
        opens_editor = not analyze_command(command, cwd=world["repo"], env=quiet_editor).unresolved
        got = outcome(world, store, command, "codex" if opens_editor else "claude-code")
        counts[got] += 1
        if got != "denied":
            failures.append(f"FAIL_CLOSED {command!r}: {got}")
    for command, expected in CASES:
        if not expected:
            continue
        got = outcome(world, store, fill(command, world))
        counts[got] += 1
        if got == "unexamined":
            failures.append(f"CASES {command!r}: unexamined")
    total = sum(counts.values())
    with capsys.disabled():
        print(f"\nbypass catalogue through run_hook: {total} must-stop entries: {counts['denied']} denied, "
              f"{counts['asked']} asked, {counts['examined']} examined, {counts['unexamined']} unexamined")
    assert total == len(FAIL_CLOSED) + sum(1 for _, expected in CASES if expected)
    assert counts["unexamined"] == 0 and not failures, "\n".join(failures)


def test_ordinary_read_only_work_passes_the_hook(world, store):  # noqa: F811
    blocked = [command for command in READ_ONLY if outcome(world, store, command) != "unexamined"]
    assert blocked == []
