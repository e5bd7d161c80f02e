"""The hooks, driven as each agent drives them: a subprocess fed the agent's JSON on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from statewise.contract import builtin_contract
from statewise.records import Provenance, RecordDraft, RecordStatus
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore

DEV = Provenance(source="developer", authority="developer", actor="dev")


@pytest.fixture
def sandbox(tmp_path):
    return make_git_sandbox(tmp_path / "sb")


@pytest.fixture
def store_path(tmp_path):
    return str(tmp_path / "store.db")


def seed(store_path, **records):
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        ids = {}
        for name, (key, value, scope) in records.items():
            ids[name] = store.put(RecordDraft(key=key, value=value, scope=scope, provenance=DEV,
                                              observed_at=datetime.now(UTC) - timedelta(days=60))).id
        return ids
    finally:
        store.close()


def hook(agent, payload, store_path, *extra, raw=None):
    done = subprocess.run(
        [sys.executable, "-m", "statewise.cli", "--store", store_path, "hook", agent, *extra],
        input=raw if raw is not None else json.dumps(payload), capture_output=True, text=True, timeout=120,
    )
    return done


def claude_payload(sandbox, command, tool="Bash", event="PreToolUse", **extra):
    tool_input = {"command": command, "description": "push the work"} if tool == "Bash" else command
    return {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(sandbox.work), "permission_mode": "default",
            "hook_event_name": event, "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_1", **extra}


def test_claude_code_denies_a_force_push_and_repairs_the_record(sandbox, store_path):
    ids = seed(store_path, protected=("repository.protected", False, f"repo:{sandbox.repo_identity}@main"))
    done = hook("claude-code", claude_payload(sandbox, "git push --force origin main"), store_path)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse" and output["permissionDecision"] == "deny"
    reason = output["permissionDecisionReason"]
    assert "repository.protected" in reason and "now true" in reason
    store = SQLiteStore(store_path)
    assert store.get(ids["protected"]).status is RecordStatus.SUPERSEDED
    store.close()


def test_claude_code_defers_when_everything_checks_out(sandbox, store_path):
    done = hook("claude-code", claude_payload(sandbox, "git push origin HEAD:refs/heads/feature/x"), store_path)
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    allowed = hook("claude-code", claude_payload(sandbox, "git push origin HEAD:refs/heads/feature/y"), store_path,
                   "--on-pass", "allow")
    assert json.loads(allowed.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_read_only_commands_pass_without_opinion(sandbox, store_path):
    done = hook("claude-code", claude_payload(sandbox, "git status && ls -la"), store_path)
    assert done.returncode == 0 and json.loads(done.stdout) == {}


def test_developer_premise_asks_with_the_recording_command(sandbox, store_path):
    seed(store_path, tests=("project.test_command", "pytest -x", f"repo:{sandbox.repo_identity}"))
    done = hook("claude-code", claude_payload(sandbox, "pytest -x"), store_path)
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "ask"
    reason = output["permissionDecisionReason"]
    assert "project.test_command" in reason and f"repo:{sandbox.repo_identity}" in reason and "pytest -x" in reason
    assert "statewise record add project.test_command" in reason


def test_codex_turns_ask_into_deny_and_blocks_with_exit_2(sandbox, store_path):
    seed(store_path, tests=("project.test_command", "pytest -x", f"repo:{sandbox.repo_identity}"))
    payload = claude_payload(sandbox, "pytest -x")
    done = hook("codex", payload, store_path)
    assert done.returncode == 2 and "project.test_command" in done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_gemini_before_tool_decision(sandbox, store_path):
    seed(store_path, protected=("repository.protected", False, f"repo:{sandbox.repo_identity}@main"))
    payload = {"session_id": "g1", "cwd": str(sandbox.work), "hook_event_name": "BeforeTool",
               "timestamp": datetime.now(UTC).isoformat(), "tool_name": "run_shell_command",
               "tool_input": {"command": "git push -f origin main"}}
    done = hook("gemini", payload, store_path)
    assert done.returncode == 0
    decision = json.loads(done.stdout)
    assert decision["decision"] == "deny" and "repository.protected" in decision["reason"]


def test_file_edits_are_guarded(sandbox, store_path, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    payload = claude_payload(sandbox, {"file_path": str(sandbox.work / "app.py"), "content": "x = 1\n"}, tool="Write")
    assert json.loads(hook("claude-code", payload, store_path).stdout) == {}
    seed(store_path, guarded=("fs.protected_paths", ["app.py"], f"repo:{sandbox.repo_identity}"))
    denied = json.loads(hook("claude-code", payload, store_path).stdout)["hookSpecificOutput"]
    assert denied["permissionDecision"] in ("deny", "ask")
    assert outside.exists() is False


@pytest.mark.parametrize(
    "raw", ["", "{not json", "[]", json.dumps({"tool_name": "Bash"}), json.dumps({"cwd": "/", "tool_name": 3})],
)
def test_malformed_input_is_an_explicit_deny(sandbox, store_path, raw):
    done = hook("claude-code", None, store_path, raw=raw)
    assert done.returncode == 0
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and "could not check" in output["permissionDecisionReason"]


def test_an_unparseable_command_fails_closed(sandbox, store_path):
    done = hook("claude-code", claude_payload(sandbox, "$(echo git) push --force origin main"), store_path)
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_internal_error_is_a_deny_not_a_pass(sandbox, tmp_path):
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 100)
    done = hook("claude-code", claude_payload(sandbox, "git push origin HEAD:refs/heads/x"), str(corrupt))
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and "not an SQLite database" in output["permissionDecisionReason"]
