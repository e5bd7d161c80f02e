"""The SessionStart note says which facts this session verified and which are only on record
(issue 23 item 1: what was not verified is never presented as fact), through the installed hook
with real JSON on stdin, a real git work tree and a real bare origin whose hook protects main."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.integrations.install import AGENTS, install_hooks, settings_path
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore
from tests.integrations.installed import client_env

AGENT_SAID = Provenance(source="agent_inference", authority="agent", actor="claude")
OBSERVED = Provenance(source="observation", authority="machine", actor="project.package_manager")
DEV = Provenance(source="developer", authority="developer", actor="dev")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))
    return make_git_sandbox(tmp_path / "sb")


def _put(store_path: str, key: str, value: object, scope: str, provenance: Provenance, age: timedelta) -> None:
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key=key, value=value, scope=scope, provenance=provenance,
                              observed_at=datetime.now(UTC) - age))
    finally:
        store.close()


def _event(agent: str, event: str, project: Path, **extra: str) -> dict:
    """The installed hook for ``event``, run as the client runs it: its settings command through a shell."""
    hooks = json.loads(settings_path(agent, project=project).read_text())["hooks"]
    command = hooks[event][-1]["hooks"][0]["command"]
    payload = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project), "hook_event_name": event,
               **extra}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120, cwd=project, env=client_env(agent, project))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_session_note_names_a_record_it_did_not_recheck_as_on_record_never_as_verified(agent, sandbox,
                                                                                          tmp_path):
    store_path = str(tmp_path / "store.db")
    repo = f"repo:{sandbox.repo_identity}"
    # Stale (60 days, past its TTL), so the session-start check asks the origin: verified now.
    _put(store_path, "repository.protected", True, f"{repo}@main", AGENT_SAID, timedelta(days=60))
    # Observed 3 days ago, inside its 7-day TTL, so nothing re-checks it; the lock file says
    # pnpm now: a note calling "yarn" a verified fact would mislead the agent.
    _put(store_path, "node.package_manager", "yarn", repo, OBSERVED, timedelta(days=3, hours=1))
    (sandbox.work / "package.json").write_text('{"name": "app"}\n')
    (sandbox.work / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    install_hooks(agent, project=sandbox.work, store=store_path)
    event = AGENTS[agent].session_event
    assert event is not None

    note = _event(agent, event, sandbox.work, source="startup")["hookSpecificOutput"]["additionalContext"]
    lines = note.splitlines()
    verified = lines.index("Verified in this check:")
    on_record = lines.index("On record, NOT re-checked this session (may be out of date):")
    assert lines[verified + 1] == "- repository.protected = true"
    assert lines[on_record + 1] == "- node.package_manager = yarn (observed 3 d ago)"
    assert "Verified facts" not in note

    # The prompt that follows names the same record as on record too, never as verified.
    prompt = _event(agent, AGENTS[agent].prompt_event or "", sandbox.work, prompt="install the dependencies",
                    session_id="s2")
    block = prompt["hookSpecificOutput"]["additionalContext"]
    [line] = [line for line in block.splitlines() if "node.package_manager" in line]
    assert line == f'- on record, not re-checked now, node.package_manager in {repo}: "yarn" (observed 3 d ago)'


def test_the_prompt_block_says_verified_now_only_for_what_a_verifier_looked_at(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    repo = f"repo:{sandbox.repo_identity}"
    _put(store_path, "repository.protected", True, f"{repo}@main", AGENT_SAID, timedelta(days=60))
    _put(store_path, "project.test_command", "make test", repo, DEV, timedelta(hours=2, minutes=5))
    install_hooks("claude-code", project=sandbox.work, store=store_path)
    block = _event("claude-code", "UserPromptSubmit", sandbox.work, prompt="push the fix")[
        "hookSpecificOutput"]["additionalContext"]
    lines = block.splitlines()
    assert f"- verified now repository.protected in {repo}@main: true" in lines
    assert (f'- on record, not re-checked now, project.test_command in {repo}: "make test" '
            "(stated by the developer 2 h ago)") in lines
    assert not any(line.startswith("- verified project.test_command") for line in lines)
