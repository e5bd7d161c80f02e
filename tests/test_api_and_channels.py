"""The Python API, the clarification/approval channels, and the executor, on real repositories."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from statewise.actions import Action
from statewise.api import StateWise
from statewise.clarify import (
    AnswerKind,
    ApprovalRequest,
    Question,
    ScriptedClarifier,
    TerminalApprover,
    TerminalClarifier,
)
from statewise.errors import KeyNameError
from statewise.execute import UnsupportedAction, command_for, run_action
from statewise.pipeline import Verdict
from statewise.planners.rules import RulePlanner
from statewise.sandbox import make_git_sandbox
from statewise.values import ValueType


@pytest.fixture
def sandbox(tmp_path):
    return make_git_sandbox(tmp_path / "sb")


def test_api_remember_recall_and_call(sandbox, tmp_path):
    with StateWise(sandbox.work, store=str(tmp_path / "s.db"), planner=RulePlanner(), user="dev") as sw:
        stored = sw.remember("repository.protected", False, authority="developer")
        assert stored.scope == f"repo:{sandbox.repo_identity}@main"
        again = sw.remember("repository.protected", False, authority="developer")
        assert again.id == stored.id and again.time.verified_at is not None  # a confirmation
        assert [r.key for r in sw.recall(keys=["repository.protected"]).records] == ["repository.protected"]
        with pytest.raises(KeyNameError):
            sw.remember("not.declared", 1)

        ran: list[Action] = []
        result = sw.call("push the changes", {"tool": "git", "operation": "git.push", "target": "origin/main",
                                              "args": {"remote": "origin", "branch": "main", "source": "HEAD",
                                                       "force": True}}, ran.append)
        assert result is None and ran and ran[0].args["branch"] == "agent/push-the-changes"

    with StateWise(sandbox.work, store=str(tmp_path / "s2.db"), user="dev") as hooked:
        hooked.remember("repository.protected", False, authority="developer")
        decision = hooked.call("push", Action(tool="git", operation="git.push",
                                              args={"remote": "origin", "branch": "main", "force": True}),
                               lambda action: pytest.fail("must not run"))
        assert decision.verdict is Verdict.STOP


def test_terminal_clarifier_parses_typed_answers():
    question = Question(key="project.test_command", scope="repo:x", value="pytest", value_type=ValueType.STRING,
                        text="What runs the tests?")
    replies = iter(["tox"])
    echoed: list[str] = []
    answer = TerminalClarifier(prompt=lambda _: next(replies), echo=echoed.append).ask(question)
    assert answer.kind is AnswerKind.CORRECT and answer.value == "tox" and echoed == ["What runs the tests?"]
    assert TerminalClarifier(prompt=lambda _: "", echo=lambda _: None).ask(question).kind is AnswerKind.CONFIRM
    assert TerminalClarifier(prompt=lambda _: "?", echo=lambda _: None).ask(question).kind is AnswerKind.UNKNOWN

    flag = Question(key="repository.protected", scope="repo:x", value=False, value_type=ValueType.BOOL, text="?")
    replies = iter(["maybe", "true"])
    messages: list[str] = []
    answer = TerminalClarifier(prompt=lambda _: next(replies), echo=messages.append).ask(flag)
    assert answer.kind is AnswerKind.CORRECT and answer.value is True
    assert any("expected true or false" in m for m in messages)

    def closed(_):
        raise EOFError

    assert TerminalClarifier(prompt=closed, echo=lambda _: None).ask(flag).kind is AnswerKind.UNKNOWN


def test_scripted_clarifier_and_terminal_approver():
    developer = ScriptedClarifier({"project.test_command": "tox"})
    ask = lambda value: developer.ask(Question(key="project.test_command", scope="global", value=value,  # noqa: E731
                                               value_type=ValueType.STRING, text="?"))
    assert ask("tox").kind is AnswerKind.CONFIRM
    assert ask("pytest").value == "tox"
    unknown = developer.ask(Question(key="user.allow_force_push", scope="global", value=True,
                                     value_type=ValueType.BOOL, text="?"))
    assert unknown.kind is AnswerKind.UNKNOWN and len(developer.asked) == 3
    request = ApprovalRequest(action=Action(tool="git", operation="git.reset_hard"), reason="needs approval")
    assert TerminalApprover(prompt=lambda _: "y").approve(request) is True
    assert TerminalApprover(prompt=lambda _: "").approve(request) is False


def test_executor_runs_argv_and_refuses_unknown_operations(sandbox):
    push = Action(tool="git", operation="git.push",
                  args={"remote": "origin", "branch": "feature/x", "source": "HEAD", "set_upstream": True})
    assert command_for(push) == ["git", "push", "--set-upstream", "origin", "HEAD:refs/heads/feature/x"]
    assert run_action(push, sandbox.work).ok and sandbox.remote_ref("feature/x") == sandbox.head()
    forced = push.model_copy(update={"args": {"remote": "origin", "branch": "main", "source": "HEAD", "force": True}})
    rejected = run_action(forced, sandbox.work)
    assert not rejected.ok and "protected" in rejected.stderr  # the origin really enforces it
    assert command_for(Action(tool="shell", operation="test.run", args={"command": "pytest -k 'a b'"})) == [
        "pytest", "-k", "a b"]
    with pytest.raises(UnsupportedAction):
        command_for(Action(tool="shell", operation="shell.exec", args={"command": "rm -rf /"}))


def _cli(*args, cwd, env_store):
    return subprocess.run([sys.executable, "-m", "statewise.cli", "--store", env_store, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_cli_guard_and_verify_on_a_real_repository(sandbox, tmp_path):
    store = str(tmp_path / "cli.db")
    scope = f"repo:{sandbox.repo_identity}@main"
    assert _cli("record", "add", "repository.protected", "false", "--scope", scope, cwd=sandbox.work,
                env_store=store).returncode == 0

    force = tmp_path / "force.json"
    force.write_text(json.dumps({"tool": "git", "operation": "git.push",
                                 "args": {"remote": "origin", "branch": "main", "source": "HEAD", "force": True}}))
    stopped = _cli("guard", "--task", "push", "--action", str(force), "--planner", "none", "--json",
                   cwd=sandbox.work, env_store=store)
    assert stopped.returncode == 3, stopped.stderr
    decision = json.loads(stopped.stdout)
    assert decision["verdict"] == "stop" and "repository.protected" in decision["reason"]

    passed = _cli("guard", "--task", "push the changes", "--report", str(tmp_path / "r.json"), cwd=sandbox.work,
                  env_store=store)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "execute" in passed.stdout and json.loads((tmp_path / "r.json").read_text())["verdict"] == "execute"

    verified = _cli("verify", "repository.protected", "--scope", scope, "--json", cwd=sandbox.work, env_store=store)
    assert verified.returncode == 0
    assert json.loads(verified.stdout)["premise"]["status"] == "valid"

    bad = _cli("guard", "--task", "x", "--action", "-", "--planner", "none", cwd=sandbox.work, env_store=store)
    assert bad.returncode == 2 and "not JSON" in bad.stderr and "Traceback" not in bad.stderr


def test_executor_refuses_deletes_outside_the_workspace(sandbox, tmp_path):
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    for path in (str(victim), "../keep.txt", "."):
        outcome = run_action(Action(tool="fs", operation="fs.delete", args={"path": path, "recursive": True}),
                             sandbox.work)
        assert outcome.returncode == 126 and "refusing" in outcome.stderr
    assert victim.read_text() == "precious" and sandbox.work.exists()
    inside = sandbox.work / "build"
    inside.mkdir()
    assert run_action(Action(tool="fs", operation="fs.delete", args={"path": "build", "recursive": True}),
                      sandbox.work).ok and not inside.exists()
