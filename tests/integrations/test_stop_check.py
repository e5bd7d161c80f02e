"""A stop on a wrong premise is continued once (issue 23 item 3), through the installed hook
with real JSON, a real git work tree and a real bare origin whose pre-receive hook protects main."""

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
DEV = Provenance(source="developer", authority="developer", actor="dev")
GIVES_UP = "The main branch is not protected here, but I cannot push without a review, so I stop."


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))
    return make_git_sandbox(tmp_path / "sb")


def _seed(store_path: str, key: str, value: object, scope: str, provenance: Provenance) -> None:
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key=key, value=value, scope=scope, provenance=provenance,
                              observed_at=datetime.now(UTC) - timedelta(days=60)))
    finally:
        store.close()


def _stop(agent: str, project: Path, *, message: str, active: bool = False, session: str = "s1",
          transcript: str = "/dev/null") -> dict[str, object]:
    event = AGENTS[agent].stop_event
    assert event is not None
    hooks = json.loads(settings_path(agent, project=project).read_text())["hooks"]
    command = hooks[event][-1]["hooks"][0]["command"]
    payload: dict[str, object] = {"session_id": session, "transcript_path": transcript, "cwd": str(project),
                                  "hook_event_name": event, "stop_hook_active": active}
    if message:
        payload["prompt_response" if agent == "gemini" else "last_assistant_message"] = message
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120, cwd=project, env=client_env(agent, project))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_stop_on_a_corrected_fact_is_continued_once_and_not_twice(agent, sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _seed(store_path, "repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID)
    install_hooks(agent, project=sandbox.work, store=store_path)
    answer = _stop(agent, sandbox.work, message=GIVES_UP)
    assert answer["decision"] == ("deny" if agent == "gemini" else "block")
    reason = str(answer["reason"])
    assert "repository.protected in" in reason and "was false, now true" in reason
    assert _stop(agent, sandbox.work, message=GIVES_UP, active=True) == {}  # the client is continuing already
    assert _stop(agent, sandbox.work, message=GIVES_UP) == {}  # told once for this record in this session


def test_a_finished_turn_or_a_stop_about_something_else_ends_normally(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _seed(store_path, "repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID)
    install_hooks("claude-code", project=sandbox.work, store=store_path)
    assert _stop("claude-code", sandbox.work, message="Done: the fix is pushed to feature/x.") == {}
    assert _stop("claude-code", sandbox.work, message="I cannot find the file you named, so I stop.") == {}


def test_a_record_statewise_cannot_verify_never_continues_a_stop(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _seed(store_path, "project.test_command", "pytest -x", f"repo:{sandbox.repo_identity}", AGENT_SAID)
    install_hooks("claude-code", project=sandbox.work, store=store_path)
    assert _stop("claude-code", sandbox.work, message="I cannot run the tests: the test command pytest -x "
                                                      "is wrong, so I stop.") == {}


def test_claude_codes_transcript_gives_the_last_message_when_the_payload_has_none(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _seed(store_path, "repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID)
    install_hooks("claude-code", project=sandbox.work, store=store_path)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("\n".join(json.dumps(entry) for entry in [
        {"type": "user", "message": {"role": "user", "content": "push the fix"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": GIVES_UP}]}},
    ]) + "\n")
    answer = _stop("claude-code", sandbox.work, message="", transcript=str(transcript))
    assert answer["decision"] == "block" and "now true" in str(answer["reason"])


def test_without_a_store_the_stop_is_answered_at_the_front_door(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    install_hooks("codex", project=project)
    assert _stop("codex", project, message=GIVES_UP) == {}
    assert not (project / ".statewise" / "store.db").exists()
