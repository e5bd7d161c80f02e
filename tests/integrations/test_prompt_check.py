"""The check before the agent plans (issue 23 item 1), through the installed hook with real JSON,
a real git work tree and a real bare origin whose pre-receive hook protects main."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.integrations.doctor import diagnose
from statewise.integrations.install import AGENTS, install_hooks, settings_path
from statewise.integrations.prompt import StateLine, check_state, render_state
from statewise.memory.context import estimate_tokens
from statewise.records import Provenance, RecordDraft, RecordStatus
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore
from tests.integrations.installed import client_env

AGENT_SAID = Provenance(source="agent_inference", authority="agent", actor="claude")
DEV = Provenance(source="developer", authority="developer", actor="dev")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))
    return make_git_sandbox(tmp_path / "sb")


def _seed(store_path: str, *records: tuple[str, object, str, Provenance]) -> list[str]:
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        return [store.put(RecordDraft(key=key, value=value, scope=scope, provenance=provenance,
                                      observed_at=datetime.now(UTC) - timedelta(days=60))).id
                for key, value, scope, provenance in records]
    finally:
        store.close()


def _prompt(agent: str, project: Path, cwd: Path, *, session: str = "s1",
            prompt: str = "push the fix to main") -> subprocess.CompletedProcess[str]:
    """The installed prompt hook, run as the client runs it: its settings command through a shell."""
    event = AGENTS[agent].prompt_event
    assert event is not None
    hooks = json.loads(settings_path(agent, project=project).read_text())["hooks"]
    command = hooks[event][-1]["hooks"][0]["command"]
    payload = {"session_id": session, "transcript_path": "/dev/null", "cwd": str(cwd), "hook_event_name": event,
               "prompt": prompt}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=client_env(agent, project))


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_wrong_record_is_corrected_and_told_before_the_model_plans(agent, sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    [protected] = _seed(store_path, ("repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID))
    install_hooks(agent, project=sandbox.work, store=store_path)

    done = _prompt(agent, sandbox.work, sandbox.work)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == AGENTS[agent].prompt_event
    block = output["additionalContext"]
    assert "CORRECTED repository.protected in" in block and "was false, now true" in block
    assert "protectedBranch" in block  # on what evidence: the origin's own configuration
    assert estimate_tokens(block) <= 400

    store = SQLiteStore(store_path)
    try:
        old = store.get(protected)
        assert old.status is RecordStatus.SUPERSEDED  # repaired with lineage, not overwritten
        [link] = [link for link in store.links(protected) if link.from_record == protected]
        assert link.to_record is not None and store.get(link.to_record).value is True
    finally:
        store.close()

    again = _prompt(agent, sandbox.work, sandbox.work)
    assert again.returncode == 0 and json.loads(again.stdout) == {}  # told already, nothing changed
    other = _prompt(agent, sandbox.work, sandbox.work, session="s2")
    assert "was false, now true" in json.loads(other.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_record_that_cannot_be_verified_is_named_unverified_never_as_fact(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _seed(store_path, ("project.test_command", "pytest -x", f"repo:{sandbox.repo_identity}", AGENT_SAID))
    install_hooks("claude-code", project=sandbox.work, store=store_path)
    block = json.loads(_prompt("claude-code", sandbox.work, sandbox.work).stdout)["hookSpecificOutput"][
        "additionalContext"]
    line = next(line for line in block.splitlines() if "project.test_command" in line)
    assert line.startswith("- UNVERIFIED") and "on record as \"pytest -x\"" in line
    assert "CORRECTED" not in block and "verified project.test_command" not in block


def test_what_the_deadline_leaves_unverified_is_said_so(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    [protected] = _seed(store_path, ("repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID))
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        lines = check_state(sandbox.work, store, builtin_contract(), deadline=0.0)
        assert [(line.kind, line.key) for line in lines] == [("unverified", "repository.protected")]
        assert "not verified within 0 s" in lines[0].why
        assert store.get(protected).status is RecordStatus.ACTIVE  # nothing repaired on no evidence
        lines = check_state(sandbox.work, store, builtin_contract(), deadline=30.0)
        assert [(line.kind, line.value, line.old_value) for line in lines] == [("corrected", True, False)]
    finally:
        store.close()


def test_a_developers_fresh_record_is_told_as_on_record_once_per_session(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key="project.test_command", value="make test", scope=f"repo:{sandbox.repo_identity}",
                              provenance=DEV))
    finally:
        store.close()
    install_hooks("gemini", project=sandbox.work, store=store_path)
    first = json.loads(_prompt("gemini", sandbox.work, sandbox.work).stdout)
    # the developer's word, not re-checked: on record with its source, never "verified"
    assert "- on record, not re-checked now, project.test_command in" in first["hookSpecificOutput"][
        "additionalContext"]
    assert json.loads(_prompt("gemini", sandbox.work, sandbox.work).stdout) == {}


def test_without_a_store_the_front_door_answers_nothing_and_creates_nothing(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    install_hooks("claude-code", project=project)
    done = _prompt("claude-code", project, project)
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    assert not (project / ".statewise" / "store.db").exists()


def test_the_block_keeps_within_its_token_budget():
    lines = [StateLine(kind="corrected", key=f"python.package_version[pkg{n}]", scope="workspace:/w",
                       value=f"{n}.0", old_value=f"{n}.1", why="pip show pkg reported it") for n in range(40)]
    text = render_state(lines, token_budget=400)
    assert estimate_tokens(text) <= 400
    assert text.splitlines()[-1].startswith("(+") and "more" in text.splitlines()[-1]
    assert render_state([], 400) == ""


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_install_writes_the_prompt_hook_and_doctor_reads_it_back(agent, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    install_hooks(agent, project=project)
    checks = {check.name: check for check in diagnose(agent, project=project)}
    assert checks["prompt check"].ok and checks["stop check"].ok
    path = settings_path(agent, project=project)
    data = json.loads(path.read_text())
    del data["hooks"][AGENTS[agent].prompt_event]
    del data["hooks"][AGENTS[agent].stop_event]
    path.write_text(json.dumps(data))
    checks = {check.name: check for check in diagnose(agent, project=project)}
    for name in ("prompt check", "stop check"):
        assert not checks[name].ok and not checks[name].fatal and "install" in checks[name].fix


def test_a_quiet_prompt_is_answered_at_the_front_door_until_the_store_changes(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _seed(store_path, ("project.test_command", "make test", f"repo:{sandbox.repo_identity}", DEV))
    install_hooks("codex", project=sandbox.work, store=store_path)
    _prompt("codex", sandbox.work, sandbox.work)  # told once
    assert json.loads(_prompt("codex", sandbox.work, sandbox.work).stdout) == {}
    notes = list((tmp_path / "cache" / "session-notes").glob("*.json"))
    assert notes and all(json.loads(note.read_text())["stdout"] == "{}" for note in notes)
    _seed(store_path, ("repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID))
    block = json.loads(_prompt("codex", sandbox.work, sandbox.work).stdout)["hookSpecificOutput"]["additionalContext"]
    assert "CORRECTED repository.protected" in block
