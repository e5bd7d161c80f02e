"""Every deny or ask tells the agent how to go on (issue 23 item 2): through the hook with real
JSON, a real git work tree and a real bare origin; the report-level rules on real guard reports."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from statewise.actions import Action
from statewise.contract import builtin_contract
from statewise.pipeline.guidance import corrections, deny_reason, way_on
from statewise.pipeline.report import (
    Decision,
    GateCheck,
    GuardReport,
    PremiseReport,
    PremiseStatus,
    RepairReport,
    Verdict,
)
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore

DEV = Provenance(source="developer", authority="developer", actor="dev")
AGENT_SAID = Provenance(source="agent_inference", authority="agent", actor="claude")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))
    return make_git_sandbox(tmp_path / "sb")


def _put(store_path, key, value, scope, provenance, *, days_old=0):
    store = SQLiteStore(store_path, key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key=key, value=value, scope=scope, provenance=provenance,
                              observed_at=datetime.now(UTC) - timedelta(days=days_old)))
    finally:
        store.close()


def _pre(sandbox, store_path, command, agent="claude-code"):
    payload = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(sandbox.work),
               "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t1",
               "tool_input": {"command": command, "description": "do the task"}}
    done = subprocess.run([sys.executable, "-m", "statewise.cli", "--store", store_path, "hook", agent],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 2), done.stderr
    return done


def test_a_push_denied_on_a_corrected_record_says_what_changed_on_what_evidence_and_what_passes(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _put(store_path, "repository.protected", False, f"repo:{sandbox.repo_identity}@main", AGENT_SAID, days_old=60)
    done = _pre(sandbox, store_path, "git push --force origin main")
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    reason = output["permissionDecisionReason"]
    assert reason.startswith("StateWise corrected its memory: repository.protected in ")
    assert "was false, now true (superseded: " in reason and "protectedBranch" in reason
    assert reason.endswith("What passes under the repaired state: push to a branch of your own and open a pull "
                           "request (git push origin HEAD:feature/<topic>).")


def test_codex_gets_the_same_way_on_in_its_block(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _put(store_path, "repository.protected", True, f"repo:{sandbox.repo_identity}@main", DEV)
    done = _pre(sandbox, store_path, "git push origin main", agent="codex")
    assert done.returncode == 2 and "HEAD:feature/<topic>" in done.stderr


def test_a_test_run_outside_the_recorded_command_is_told_the_command_that_exists(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    _put(store_path, "project.test_command", "make test", f"repo:{sandbox.repo_identity}", DEV)
    done = _pre(sandbox, store_path, "pytest -x")
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert "What passes under the repaired state: run the test command on record: make test." in \
        output["permissionDecisionReason"]


def test_no_way_on_is_invented_where_the_contract_derives_none(sandbox, tmp_path):
    store_path = str(tmp_path / "store.db")
    done = _pre(sandbox, store_path, "rm -rf /etc")
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert "What passes" not in output["permissionDecisionReason"]


def test_a_way_on_that_would_still_fail_is_not_told():
    contract = builtin_contract()
    push = Action(tool="git", operation="push", target="origin/main", args={"branch": "main", "remote": "origin"})
    every_branch_protected = {"repository.protected_branches": ["*"], "git.current_branch": "main",
                              "repository.protected": True}
    premises = [PremiseReport(record_id=f"r{n}", key=key, scope="repo:x", value=value, status=PremiseStatus.VALID,
                              route="reliability") for n, (key, value) in enumerate(every_branch_protected.items())]
    decision = _decision(push, premises, [GateCheck(name="invariant:no_direct_push_to_protected_branch", passed=False)])
    assert way_on(decision, contract) == ""  # feature/<topic> matches "*" too
    premises[0] = premises[0].model_copy(update={"value": ["main"]})
    decision = _decision(push, premises, [GateCheck(name="invariant:no_direct_push_to_protected_branch", passed=False)])
    assert "HEAD:feature/<topic>" in way_on(decision, contract)


def _decision(action, premises, gate, repairs=()):
    report = GuardReport(task="t", task_scope="repo:x", proposal=action, verdict=Verdict.STOP, reason="r",
                         premises=premises, gate=gate, repairs=list(repairs))
    return Decision(verdict=Verdict.STOP, action=None, reason="r", report=report)


def test_a_relocation_and_a_narrowing_are_told_as_corrections():
    action = Action(tool="uv", operation="pip_install", args={"package": "x"})
    evidence_premise = PremiseReport(record_id="r1", key="python.interpreter", scope="user:ann", value="python3.9",
                                     status=PremiseStatus.DEFECTIVE, route="verifier", detail="which python3")
    repairs = [RepairReport(kind="relocate", record_id="r1", new_record_id="r2", key="python.interpreter",
                            scope="workspace:/w", old_value="python3.9", new_value="python3.11"),
               RepairReport(kind="narrow", record_id="r3", new_record_id="r4", key="node.version",
                            scope="repo:x@dev", old_value="18", new_value="20"),
               RepairReport(kind="confirm", record_id="r5", key="git.current_branch", scope="repo:x",
                            old_value="main", new_value="main")]
    text = corrections(_decision(action, [evidence_premise], [], repairs))
    assert 'python.interpreter in workspace:/w was "python3.9", now "python3.11" (moved to the scope the ' \
           'evidence reaches: which python3; record r2)' in text
    assert 'node.version in repo:x@dev was "18", now "20" (narrowed to this scope' in text
    assert "git.current_branch" not in text  # a confirmation changes nothing the agent believes


def test_a_deny_never_carries_a_question_for_the_developer():
    action = Action(tool="git", operation="push", args={"branch": "main", "force": True})
    waiting = PremiseReport(record_id="r1", key="user.allow_force_push", scope="user:ann", value=True,
                            status=PremiseStatus.UNRESOLVED, route="clarification",
                            question="May ann force-push?", missing="needs the developer: May ann force-push?")
    gate = [GateCheck(name="premises_resolved", passed=False, unresolved=True,
                      detail="user.allow_force_push in user:ann: needs the developer: May ann force-push?"),
            GateCheck(name="invariant:no_force_push_to_protected_branch", passed=False, detail="Never force-push.")]
    reason = deny_reason(_decision(action, [waiting], gate))
    assert "May ann force-push?" not in reason and "?" not in reason
    assert "user.allow_force_push in user:ann is the developer's to confirm" in reason
    assert "Never force-push." in reason
