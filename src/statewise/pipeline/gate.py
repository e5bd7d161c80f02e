"""Stage 5, the gate: an independent state-action check before anything runs.

It does not ask the planner anything. It passes an action only when:

* the contract declares the operation (an unknown operation is never assumed harmless);
* no premise is unresolved;
* the action agrees with the resolved state: it was not planned from a value that was just
  found to be wrong (an action proposed before a repair must be re-planned);
* every hard invariant of the contract holds, evaluated over the resolved state (an
  invariant that cannot be evaluated, e.g. because a key is unknown, does not hold);
* the permission requirements are met: where the contract demands approval, the approval
  channel is asked before execution, and no channel means no approval.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from statewise.actions import Action
from statewise.clarify import ApprovalChannel, ApprovalRequest
from statewise.contract import Contract
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.report import GateCheck, PremiseReport, PremiseStatus

__all__ = ["run_gate"]


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

    violations = contract.violations(action, dict(state))
    for violation in violations:
        reason = violation.message + (f" ({violation.error})" if violation.error else "")
        checks.append(GateCheck(name=f"invariant:{violation.name}", passed=False, detail=reason,
                                unresolved=violation.error is not None))
    if not violations:
        checks.append(GateCheck(name="invariants", passed=True, detail="every hard invariant holds"))

    if spec is not None and spec.requires_approval:
        if approver is None:
            checks.append(GateCheck(name="approval", passed=False,
                                    detail=f"{operation} needs approval and no approval channel is configured"))
        elif all(check.passed for check in checks):
            meter.approvals_asked += 1
            with meter.outside():
                approved = approver.approve(ApprovalRequest(action=action, reason=f"{operation} requires approval",
                                                            task=task_text))
            checks.append(GateCheck(name="approval", passed=approved,
                                    detail="approved" if approved else "the developer declined"))
        else:
            checks.append(GateCheck(name="approval", passed=False, detail="not asked: an earlier check failed",
                                    unresolved=True))
    return checks
