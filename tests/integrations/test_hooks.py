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


def test_a_verified_violation_is_a_deny_even_when_another_premise_could_be_asked(sandbox, store_path, monkeypatch):
    # Issue 11, defect 3: main's protection is verified on the real remote, and the standing
    # permission to force-push was stated by a teammate, not by alice. "Yes" to an ask would run
    # the push that the verified protection forbids, so the answer is a deny.
    monkeypatch.setenv("STATEWISE_USER", "alice")
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key="user.allow_force_push", value=True, scope="user:alice",
                              provenance=Provenance(source="developer", authority="developer", actor="bob"),
                              observed_at=datetime.now(UTC) - timedelta(days=1)))
    finally:
        store.close()
    done = hook("claude-code", claude_payload(sandbox, "git push --force origin main"), store_path)
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny", output
    assert "no_force_push_to_protected_branch" in output["permissionDecisionReason"]


def test_codex_turns_ask_into_deny_and_blocks_with_exit_2(sandbox, store_path):
    seed(store_path, tests=("project.test_command", "pytest -x", f"repo:{sandbox.repo_identity}"))
    payload = claude_payload(sandbox, "pytest -x")
    done = hook("codex", payload, store_path)
    assert done.returncode == 2 and "project.test_command" in done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_operation_that_needs_approval_is_asked_in_claude_code_and_denied_elsewhere(sandbox, store_path):
    # git reset --hard passes every check; the contract requires a developer's approval. Claude
    # Code's permission prompt is that approval; Codex and Gemini CLI cannot ask, so they deny.
    payload = claude_payload(sandbox, "git reset --hard HEAD")
    claude = json.loads(hook("claude-code", payload, store_path).stdout)["hookSpecificOutput"]
    assert claude["permissionDecision"] == "ask"
    assert "the developer's approval" in claude["permissionDecisionReason"]
    assert "git.reset_hard" in claude["permissionDecisionReason"]
    codex = hook("codex", payload, store_path)
    assert codex.returncode == 2 and "the developer's approval" in codex.stderr
    gemini = hook("gemini", {"session_id": "g1", "cwd": str(sandbox.work), "hook_event_name": "BeforeTool",
                             "tool_name": "run_shell_command", "tool_input": {"command": "git reset --hard HEAD"}},
                  store_path)
    assert json.loads(gemini.stdout)["decision"] == "deny"


def test_approval_is_not_asked_when_another_action_of_the_call_is_denied(sandbox, store_path):
    # The reset only waits for approval, but the force push after it is denied on the evidence
    # (main is protected on the remote): a "yes" to an approval prompt would run both.
    command = "git reset --hard HEAD && git push --force origin main"
    done = hook("claude-code", claude_payload(sandbox, command), store_path)
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny", output
    assert "git.push" in output["permissionDecisionReason"]
    assert "the developer's approval" not in output["permissionDecisionReason"]


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


# --- post-tool observation capture ------------------------------------------------------------


def post(agent, sandbox, store_path, command, response, tool="Bash"):
    event = "AfterTool" if agent == "gemini" else "PostToolUse"  # as the real clients name it
    payload = {"session_id": "s1", "cwd": str(sandbox.work), "hook_event_name": event, "tool_name": tool,
               "tool_input": {"command": command}, "tool_response": response, "tool_use_id": "toolu_9"}
    return hook(agent, payload, store_path, "--event", "post-tool-use")


def test_a_refused_push_contradicts_a_stale_protection_record(sandbox, store_path):
    ids = seed(store_path, protected=("repository.protected", False, f"repo:{sandbox.repo_identity}@main"))
    from statewise.execute import run_action
    from statewise.actions import Action

    refused = run_action(Action(tool="git", operation="git.push",
                                args={"remote": "origin", "branch": "main", "source": "HEAD", "force": True}),
                         sandbox.work)
    assert not refused.ok  # the real remote really refused it; feed its real output to the hook
    done = post("claude-code", sandbox, store_path, "git push --force origin main",
                {"stdout": refused.stdout, "stderr": refused.stderr, "interrupted": False})
    assert done.returncode == 0, done.stderr
    note = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "repository.protected was false, now true" in note
    store = SQLiteStore(store_path)
    try:
        old = store.get(ids["protected"])
        assert old.status is RecordStatus.SUPERSEDED
        new = store.get(old.superseded_by)
        assert new.value is True and new.provenance.source.value == "tool_output"
        assert new.provenance.reference == "toolu_9" and new.provenance.actor == "claude-code:Bash"
    finally:
        store.close()


def test_printed_versions_are_learned_and_narrow_an_over_general_record(sandbox, store_path):
    seed(store_path, python=("runtime.python_version", "3.8", "global"))
    done = post("gemini", sandbox, store_path, "python3 --version", {"llmContent": "Python 3.12.1\n"},
                tool="run_shell_command")
    assert done.returncode == 0
    # Gemini appends AfterTool's additionalContext to the tool result the model reads.
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "AfterTool" and "runtime.python_version" in output["additionalContext"]
    store = SQLiteStore(store_path)
    try:
        assert store.get_active("runtime.python_version", f"workspace:{sandbox.work}").value == "3.12.1"
        assert store.get_active("runtime.python_version", "global").value == "3.8"  # narrowed, not overwritten
    finally:
        store.close()


def test_a_missing_npm_script_is_recorded(sandbox, store_path):
    done = post("codex", sandbox, store_path, "npm test",
                {"stderr": 'npm error Missing script: "test"\nnpm error\n'})
    assert done.returncode == 0
    store = SQLiteStore(store_path)
    try:
        record = store.get_active("npm.script_exists[test]", f"repo:{sandbox.repo_identity}")
        assert record is not None and record.value is False
    finally:
        store.close()


def test_output_that_reveals_nothing_records_nothing(sandbox, store_path):
    done = post("claude-code", sandbox, store_path, "ls", {"stdout": "Python 3.12.1"})
    assert json.loads(done.stdout) == {}
    store = SQLiteStore(store_path)
    assert store.count() == 0
    store.close()


def test_the_projects_config_toml_reaches_the_hook(sandbox, store_path, tmp_path, monkeypatch):
    from statewise.settings import approve_config

    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the developer's approvals live there
    settings = sandbox.work / ".statewise" / "config.toml"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('on-pass = "allow"\n')
    payload = claude_payload(sandbox, "git push origin HEAD:refs/heads/feature/z")
    # Not approved by the developer (issue 25): the weakening setting is ignored.
    unapproved = json.loads(hook("claude-code", payload, store_path).stdout)
    assert unapproved == {}
    approve_config(settings)
    allowed = json.loads(hook("claude-code", payload, store_path).stdout)
    assert allowed["hookSpecificOutput"]["permissionDecision"] == "allow"
    settings.write_text('on-pass = "sometimes"\n')  # malformed settings: a deny, never a pass
    denied = json.loads(hook("claude-code", payload, store_path).stdout)
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "config.toml" in denied["hookSpecificOutput"]["permissionDecisionReason"]


# --- session start: the post-tool filters checked against the contract in effect --------------

CARGO_RULE = ("observations:\n  - name: cargo_version_printed\n    description: Cargo printed its version.\n"
              "    command: '^cargo\\s+--version$'\n    output: '^cargo (?P<value>\\d+\\.\\d+\\.\\d+)'\n"
              "    key: runtime.node_version\n")


def _session(sandbox, agent="claude-code"):
    from statewise.integrations.hooks import run_hook

    payload = {"session_id": "s1", "cwd": str(sandbox.work), "hook_event_name": "SessionStart", "source": "startup"}
    return json.loads(run_hook(agent, json.dumps(payload), event="session").stdout)


def test_a_session_warns_when_the_installed_capture_filters_miss_a_rule_of_the_contract(sandbox, tmp_path,
                                                                                        monkeypatch):
    from statewise.integrations.hook_entry import quick_outcome
    from statewise.integrations.install import install_hooks

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))  # this test's session notes only
    for agent in ("claude-code", "codex", "gemini"):
        install_hooks(agent, project=sandbox.work)
        assert "systemMessage" not in _session(sandbox, agent)  # the filters were written from this very contract

    # A contract chosen after install, with a rule whose commands no installed filter lets through.
    contract = tmp_path / "team.yaml"
    contract.write_text(f"name: team\nversion: 1\nextends: coding\n{CARGO_RULE}")  # the built-in contract and one rule
    (sandbox.work / ".statewise").mkdir(exist_ok=True)
    (sandbox.work / ".statewise" / "config.toml").write_text(f'contract = "{contract}"\n')
    output = _session(sandbox)
    assert "cargo_version_printed" in output["systemMessage"] and "statewise install claude-code" in \
        output["systemMessage"]
    assert output["systemMessage"] in output["hookSpecificOutput"]["additionalContext"]  # for a headless run too
    # Codex and Gemini CLI filter their post-tool call in the shell, from the same literals:
    # the same gap, named for that client (both take `systemMessage` at SessionStart).
    for agent, client in (("codex", "Codex"), ("gemini", "Gemini CLI")):
        output = _session(sandbox, agent)
        assert "cargo_version_printed" in output["systemMessage"] and f"statewise install {agent}" in \
            output["systemMessage"] and f"in {client}'s settings" in output["systemMessage"]
        assert output["systemMessage"] in output["hookSpecificOutput"]["additionalContext"]

    for agent in ("claude-code", "codex", "gemini"):
        install_hooks(agent, project=sandbox.work)  # the fix the warning names
        assert "systemMessage" not in _session(sandbox, agent)

    # With the built-in contract the session note is reused; a filter taken out of the settings
    # file is a change the note watches, so the next session checks again and warns.
    (sandbox.work / ".statewise" / "config.toml").unlink()
    install_hooks("claude-code", project=sandbox.work)
    payload = json.dumps({"session_id": "s2", "cwd": str(sandbox.work), "hook_event_name": "SessionStart"})
    assert "systemMessage" not in _session(sandbox)
    assert quick_outcome("claude-code", "session", payload, None) is not None
    settings = sandbox.work / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["PostToolUse"] = [g for g in data["hooks"]["PostToolUse"] if g["hooks"][0]["if"] != "Bash(*npm*)"]
    settings.write_text(json.dumps(data))
    assert quick_outcome("claude-code", "session", payload, None) is None
    assert "npm_missing_script" in _session(sandbox)["systemMessage"]
    # Codex's note watches Codex's hooks file (and is Codex's own: Claude Code's says other things).
    assert "systemMessage" not in _session(sandbox, "codex")
    assert quick_outcome("codex", "session", payload, None) is not None
    hooks_file = sandbox.work / ".codex" / "hooks.json"
    data = json.loads(hooks_file.read_text())
    post = data["hooks"]["PostToolUse"][0]["hooks"][0]
    post["command"] = post["command"].replace("|*'npm'*", "")
    hooks_file.write_text(json.dumps(data))
    assert quick_outcome("codex", "session", payload, None) is None
    assert "npm_missing_script" in _session(sandbox, "codex")["systemMessage"]
