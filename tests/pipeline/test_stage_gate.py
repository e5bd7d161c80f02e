"""Stage 5, the gate, on its own: the planner-independent checks over the resolved state and
the premises, with the built-in contract's real invariants and a real approval channel."""

from __future__ import annotations

from statewise.actions import Action
from statewise.clarify import ScriptedApprover
from statewise.contract import builtin_contract
from statewise.pipeline import PremiseReport, PremiseStatus
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.gate import run_gate
from statewise.records import Authority, Evidence, SourceKind, utcnow
from statewise.values import ValueType

MAIN = "repo:github.com/acme/app@main"
PROTECTED_MAIN = {"repository.protected": True, "repository.protected_branches": ["main"],
                  "git.current_branch": "main"}
FORCE_PUSH = Action(tool="git", operation="git.push", target="origin/main",
                    args={"remote": "origin", "branch": "main", "source": "HEAD", "force": True})
BRANCH_PUSH = Action(tool="git", operation="git.push", target="origin/agent/work",
                     args={"remote": "origin", "branch": "agent/work", "source": "HEAD"})


def _gate(action: Action, *, state=PROTECTED_MAIN, premises=(), repaired: bool = True, approver=None,
          meter: CostMeter | None = None):
    checks = run_gate(action, contract=builtin_contract(), state=state, premises=list(premises),
                      planned_from_repaired_state=repaired, approver=approver, meter=meter or CostMeter())
    return {check.name: check for check in checks}


def _failed(checks) -> list[str]:
    return sorted(name for name, check in checks.items() if not check.passed)


def _wrong_protection() -> PremiseReport:
    evidence = Evidence(key="repository.protected", value=True, value_type=ValueType.BOOL, scope=MAIN,
                        source=SourceKind.OBSERVATION, authority=Authority.MACHINE, actor="git.branch_protection",
                        observed_at=utcnow())
    return PremiseReport(record_id="rec_1", key="repository.protected", scope=MAIN, value=False,
                         status=PremiseStatus.DEFECTIVE, route="verifier", evidence=evidence)


def test_a_safe_action_on_a_resolved_state_passes_every_check():
    checks = _gate(BRANCH_PUSH)
    assert _failed(checks) == []
    assert {"operation_declared", "premises_resolved", "state_action_agreement", "invariants"} <= set(checks)


def test_a_force_push_to_a_protected_branch_breaks_the_invariant():
    checks = _gate(FORCE_PUSH)
    failed = _failed(checks)
    # The contract may hold several invariants against it; this one is the point.
    assert "invariant:no_force_push_to_protected_branch" in failed
    assert all(name.startswith("invariant:") for name in failed) and "invariants" not in checks
    check = checks["invariant:no_force_push_to_protected_branch"]
    assert "protected" in check.detail and check.unresolved is False  # decided on the evidence


def test_an_invariant_that_cannot_be_evaluated_does_not_hold():
    checks = _gate(FORCE_PUSH, state={})
    check = checks["invariant:no_force_push_to_protected_branch"]
    assert check.passed is False and check.unresolved is True  # for want of a fact, not on evidence


def test_an_undeclared_operation_is_never_assumed_harmless():
    checks = _gate(Action(tool="shell", operation="rocket.launch", args={"command": "launch"}))
    assert checks["operation_declared"].passed is False
    assert "not declared" in checks["operation_declared"].detail


def test_an_unresolved_premise_and_an_action_planned_from_a_wrong_value_stop_it():
    open_question = PremiseReport(record_id="rec_2", key="project.test_command", scope="repo:github.com/acme/app",
                                  value="pytest", status=PremiseStatus.UNRESOLVED, route="clarification",
                                  missing="needs the developer")
    checks = _gate(BRANCH_PUSH, premises=[open_question])
    assert _failed(checks) == ["premises_resolved"] and checks["premises_resolved"].unresolved
    assert "project.test_command" in checks["premises_resolved"].detail
    stale = _gate(BRANCH_PUSH, premises=[_wrong_protection()], repaired=False)
    assert _failed(stale) == ["state_action_agreement"]
    assert "planned from repository.protected = false, which is wrong (true)" in stale["state_action_agreement"].detail
    # Replanned from the repaired store, the same premise no longer blocks it.
    assert _failed(_gate(BRANCH_PUSH, premises=[_wrong_protection()], repaired=True)) == []


def test_an_operation_that_needs_approval_asks_the_channel_only_when_everything_else_passed():
    reset = Action(tool="git", operation="git.reset_hard", args={"ref": "HEAD~1"})
    state = {"git.clean_tree": True, "git.current_branch": "main", "git.merge_in_progress": False,
             "git.upstream": "origin/main", "git.default_branch": "main"}
    unasked = _gate(reset, state=state)
    assert _failed(unasked) == ["approval"] and "no approval channel" in unasked["approval"].detail
    meter = CostMeter()
    approver = ScriptedApprover(allow=frozenset({"git.reset_hard"}))
    approved = _gate(reset, state=state, approver=approver, meter=meter)
    assert _failed(approved) == [] and approved["approval"].detail == "approved" and meter.approvals_asked == 1
    assert [request.action for request in approver.requests] == [reset]
    refused = _gate(reset, state=state, approver=ScriptedApprover(allow=frozenset()))
    assert _failed(refused) == ["approval"] and refused["approval"].detail == "the developer declined"
    # An earlier failure (a question still open) means the developer is not bothered at all.
    waiting = ScriptedApprover(allow=frozenset({"git.reset_hard"}))
    open_question = PremiseReport(record_id=None, key="git.upstream", scope=MAIN, value=None,
                                  status=PremiseStatus.UNRESOLVED, route="verifier", missing="could not observe")
    blocked = _gate(reset, state=state, approver=waiting, premises=[open_question])
    assert waiting.requests == [] and blocked["approval"].detail == "not asked: an earlier check failed"


# --- the command check: a typed action that carries its shell command -------------------------

LINT_CONTRACT = """
name: lint-team
version: 1
extends: coding
operations:
  lint.run:
    tool: shell
    risk: low
    slots:
      command: {type: string, required: true}
commands:
  lint-ruff:
    program: ruff
    subcommand: [check]
    options: any
    operation: lint.run
"""


def _command_check(tmp_path, command: str):
    from statewise.contract import load_contract_text
    from statewise.scopes import TaskScope

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'app'\n", encoding="utf-8")
    action = Action(tool="shell", operation="lint.run", args={"command": command})
    checks = run_gate(action, contract=load_contract_text(LINT_CONTRACT), state={}, premises=[],
                      planned_from_repaired_state=True, approver=None, meter=CostMeter(),
                      scope=TaskScope(workspace=str(tmp_path)))
    return {check.name: check for check in checks}.get("command_agreement")


def test_a_contract_operation_over_a_low_risk_command_its_rules_do_not_name_is_not_compared(tmp_path):
    # The team calls `tox -e lint` its lint.run; its rules name only ruff, and the built-in
    # normalizer reads tox as a test run: nothing says the two disagree.
    assert _command_check(tmp_path, "tox -e lint") is None
    ruff = _command_check(tmp_path, "ruff check src")
    assert ruff is not None and ruff.passed


def test_a_contract_operation_over_a_risky_command_must_still_agree(tmp_path):
    pushed = _command_check(tmp_path, "git push --force origin main")
    assert pushed is not None and not pushed.passed and "git.push" in pushed.detail
