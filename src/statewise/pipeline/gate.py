"""Stage 5, the gate: an independent state-action check before anything runs.

It does not ask the planner anything. It passes an action only when:

* the contract declares the operation (an unknown operation is never assumed harmless);
* no premise is unresolved;
* the action agrees with the resolved state: it was not planned from a value that was just
  found to be wrong (an action proposed before a repair must be re-planned);
* every hard invariant of the contract holds, evaluated over the resolved state (an
  invariant that cannot be evaluated, e.g. because a key is unknown, does not hold);
* what will run is what was checked: an action that carries the shell command it runs
  (``args.command``) has its typed slots compared with the slots the command rules derive
  from that command (an ``index`` naming the private index while the command installs from
  the public one is a mismatch), for every operation the shell normalizer can derive;
* the permission requirements are met: where the contract demands approval, the approval
  channel is asked before execution, and no channel means no approval.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from statewise.actions import Action
from statewise.contract import CommandRule, Contract
from statewise.expressions import state_keys_read
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.reasons import merge_unobserved
from statewise.pipeline.report import GateCheck, PremiseReport, PremiseStatus
from statewise.scopes import TaskScope

if TYPE_CHECKING:  # only the type: a hook call has no channel (see statewise.pipeline.guard)
    from statewise.clarify import ApprovalChannel

__all__ = ["NO_APPROVAL_CHANNEL", "run_gate"]

#: The end of the approval check's detail when no approval channel is configured (the hook
#: turns that stop into the client's own permission prompt where it has one).
NO_APPROVAL_CHANNEL = "needs approval and no approval channel is configured"


def run_gate(
    action: Action,
    *,
    contract: Contract,
    state: Mapping[str, Any],
    premises: Sequence[PremiseReport],
    planned_from_repaired_state: bool,
    approver: ApprovalChannel | None,
    meter: CostMeter,
    task_text: str = "",
    state_reports: Sequence[PremiseReport] = (),
    scope: TaskScope | None = None,
) -> list[GateCheck]:
    """Run every check and return all results (the caller executes only if all passed)."""
    checks: list[GateCheck] = []
    operation = contract.operation_name(action.tool, action.operation)
    spec = contract.operation(operation) if operation else None
    checks.append(GateCheck(
        name="operation_declared", passed=spec is not None,
        detail=f"{operation}" if spec is not None else f"{action.tool} {action.operation} is not declared by the "
                                                        f"{contract.name} contract",
    ))

    unresolved = [p for p in premises if p.status is PremiseStatus.UNRESOLVED]
    checks.append(GateCheck(
        name="premises_resolved", passed=not unresolved, unresolved=bool(unresolved),
        detail="; ".join(f"{p.key} in {p.scope}: {p.missing}" for p in unresolved) or "every premise resolved",
    ))

    stale_basis = [p for p in premises if p.status is PremiseStatus.DEFECTIVE] if not planned_from_repaired_state else []
    checks.append(GateCheck(
        name="state_action_agreement", passed=not stale_basis,
        detail="; ".join(
            f"the action was planned from {p.key} = {json.dumps(p.value)}, which is wrong "
            f"({'absent' if p.absent else json.dumps(p.evidence.value if p.evidence else None)}); re-plan"
            for p in stale_basis
        ) or "planned from the resolved state",
    ))

    agreement = _command_agreement(action, operation, contract, scope)
    if agreement is not None:
        checks.append(agreement)

    violations = contract.violations(action, dict(state))
    reports = {r.key: r for r in [*state_reports, *premises]}
    for violation in violations:
        reason = _explain(violation, action, contract, state, reports, scope)
        checks.append(GateCheck(name=f"invariant:{violation.name}", passed=False, detail=reason,
                                unresolved=violation.error is not None))
    if not violations:
        checks.append(GateCheck(name="invariants", passed=True, detail="every hard invariant holds"))

    if spec is not None and spec.requires_approval:
        if approver is None:
            checks.append(GateCheck(name="approval", passed=False,
                                    detail=f"{operation} {NO_APPROVAL_CHANNEL}"))
        elif all(check.passed for check in checks):
            meter.approvals_asked += 1
            from statewise.clarify import ApprovalRequest  # here: a hook call has no approver

            with meter.outside():
                approved = approver.approve(ApprovalRequest(action=action, reason=f"{operation} requires approval",
                                                            task=task_text))
            checks.append(GateCheck(name="approval", passed=approved,
                                    detail="approved" if approved else "the developer declined"))
        else:
            checks.append(GateCheck(name="approval", passed=False, detail="not asked: an earlier check failed",
                                    unresolved=True))
    return checks


def _command_agreement(action: Action, operation: str | None, contract: Contract,
                       scope: TaskScope | None) -> GateCheck | None:
    """Whether the typed slots of an action that carries its shell command are what that
    command does (issue 10 item 5), or None when there is nothing to compare: no command, no
    workspace to read it in, a contract's own operation that no command rule derives, or one
    whose rules name other programs over a command that does nothing above low risk
    (docs/shell.md)."""
    command = action.args.get("command")
    if operation is None or not isinstance(command, str) or not command.strip():
        return None
    workspace = scope.workspace if scope is not None else None
    if not workspace or not workspace.startswith("/"):
        return None
    from statewise.commands import command_disagreement  # noqa: PLC0415 - only for such actions
    from statewise.contract import builtin_contract  # noqa: PLC0415 - cached, already loaded by the hook

    if operation not in builtin_contract("coding").operations:
        own_rules = [rule for rule in contract.commands.values() if rule.operation == operation]
        if not own_rules:
            # A contract's own operation no command rule derives (a set's ``build.clean`` over
            # ``rm -rf dist``): the contract does not say which commands it is.
            return None
        if not _names_a_program_of(own_rules, command) and _only_low_risk(command, workspace, contract):
            # Its rules name other programs (``lint.run``: ruff, eslint) and this low-risk
            # command is none of them (``tox -e lint``, read as ``test.run``): nothing to
            # compare. A riskier command typed as the operation must still agree.
            return None
    problem = command_disagreement(action.model_copy(update={"operation": operation}), cwd=workspace,
                                   workspace=workspace, contract=contract, unguarded_agrees=True)
    return GateCheck(name="command_agreement", passed=problem is None,
                     detail=f"the action {problem}" if problem else "its command does what the typed slots say (or nothing guarded)")


def _only_low_risk(command: str, workspace: str, contract: Contract) -> bool:
    """Whether ``command`` reads with confidence and every guarded action it yields is low risk."""
    from statewise.commands import analyze_command  # noqa: PLC0415 - only for such actions
    from statewise.commands.rules import operation_risk  # noqa: PLC0415

    analysis = analyze_command(command, cwd=workspace, workspace=workspace, contract=contract)
    return not analysis.unresolved and all(
        (derived.risk or operation_risk(derived.operation, contract)) == "low" for derived in analysis.actions)


def _names_a_program_of(rules: list[CommandRule], command: str) -> bool:
    """Whether one of ``rules`` names a program that ``command`` runs (any of its words, by
    path or by basename: a cheap over-approximation of its programs)."""
    import shlex  # noqa: PLC0415 - only for actions that carry their command

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    names = {word for word in words} | {word.rsplit("/", 1)[-1] for word in words}
    from statewise.contract.readings import READINGS  # noqa: PLC0415 - only for such actions

    programs = [program for rule in rules
                for program in ((rule.program,) if rule.program is not None else READINGS[rule.reading or ""].programs)]
    return any(program in names or program.rsplit("/", 1)[-1] in names or program == "*" for program in programs)


def _explain(violation: Any, action: Action, contract: Contract, state: Mapping[str, Any],
             reports: Mapping[str, PremiseReport], scope: TaskScope | None) -> str:
    """A failed invariant's message with its evidence: each fact it read, what it is and where
    that came from, and for a fact nobody knows, why, and the one command that records it.
    An evaluation error about a missing key is never shown as such."""
    invariant = next((i for i in contract.invariants if i.name == violation.name), None)
    read: list[str] = []
    if invariant is not None:
        read = list(dict.fromkeys([*state_keys_read(invariant.when), *state_keys_read(invariant.check),
                                   *(k for k in slot_qualified_keys(contract, action)
                                     if k.split("[", 1)[0] in invariant.check)]))
    facts: list[str] = []
    unknown = False
    for key in read:
        report = reports.get(key)
        if key in state:
            source = ""
            if report is not None and report.evidence is not None:
                source = f" ({report.evidence.detail or report.evidence.actor})" if (
                    report.evidence.detail or report.evidence.actor) else ""
            elif report is not None and report.record_id:
                source = f" (record {report.record_id})"
            facts.append(f"{key} = {json.dumps(state[key])}{source}")
            continue
        spec = contract.state_spec(key)
        if report is not None and report.absent:
            facts.append(f"{key}: none ({report.detail})")
            continue
        unknown = True
        if spec is not None and spec.authority.value == "developer":
            where = scope.most_specific_at(spec.scope) if scope is not None else None
            shown = str(where) if where is not None else "<scope>"
            facts.append(f"{key}: not on record for {shown}; record it with: statewise record add {key} "
                         f"{shlex.quote('<value>')} --scope {shlex.quote(shown)}")
        elif report is not None:
            facts.append(f"{key}: unknown ({report.missing or report.detail or report.status.value})")
        else:
            facts.append(f"{key}: unknown (not resolved)")
    text = str(violation.message)
    error = violation.error or ""
    if error and not (unknown and "no such key" in error):
        text += f" ({error})"
    if facts:
        text += " [" + "; ".join(merge_unobserved(facts)) + "]"
    return text


# An invariant reads a fact about the action's own slot as state["base[" + action.args.slot + "]"]
# (or tests `"base[" + action.args.slot + "]" in state`).
_SLOT_QUALIFIED = re.compile(r'"([A-Za-z_][\w.]*)\[" \+ action\.args\.(\w+) \+ "\]"')


def slot_qualified_keys(contract: Contract, action: Action) -> list[str]:
    """The qualified keys the applicable invariants read about this action's slots, e.g.
    ``git.tracked[data]`` for an ``fs.delete`` of ``data`` whose invariant reads
    ``state["git.tracked[" + action.args.path + "]"]``. Keys the contract does not declare
    as qualified, and slots the action does not fill with a string, are left out."""
    keys: dict[str, None] = {}
    results = contract.check_invariants(action, {})
    for invariant, result in zip(contract.invariants, results, strict=True):
        if not result.applies:
            continue
        for text in (invariant.when, invariant.check):
            for base, slot in _SLOT_QUALIFIED.findall(text):
                value = action.args.get(slot)
                spec = contract.state_spec(base)
                if isinstance(value, str) and value and spec is not None and spec.qualified:
                    keys[f"{base}[{value}]"] = None
    return list(keys)
