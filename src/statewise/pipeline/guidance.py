"""How an agent goes on after a stop: the texts a deny or an ask carries besides its reason.

A deny that only says "no" leaves a model to guess, and it often guesses the wrong record
again. Every stop therefore says, from the guard's own report:

* :func:`corrections` — each record the check corrected, relocation and narrowing included,
  written ``KEY in SCOPE was OLD, now NEW`` with the evidence that decided it (the form a model
  and :func:`statewise.planners.base.read_corrections` both read);
* :func:`way_on` — the action that passes under the repaired state, when the contract can
  derive it: an invariant's ``instead`` remedies (contract data), each tried by changing the
  stopped action's slots and evaluating every invariant over the resolved state; one is told
  only if nothing fails;
* :func:`deny_reason` — the gate's failures for a deny, where a question only the developer can
  answer is not put to the agent (a deny reaches no developer; the hook asks instead when the
  answer could settle the stop, see ``integrations.hooks``).
"""

from __future__ import annotations

import json
from typing import Any

from statewise.actions import Action
from statewise.contract import Contract
from statewise.pipeline.report import Decision, PremiseReport, PremiseStatus, RepairReport
from statewise.pipeline.resolution import resolved_value

__all__ = ["corrections", "deny_reason", "resolved_state", "way_on"]

#: Repairs that change what the agent should believe (a confirmation or a learnt fact does not).
_CORRECTING = ("supersede", "narrow", "relocate", "retract")
_MAX_EVIDENCE = 200


def _short(text: str, limit: int = _MAX_EVIDENCE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _evidence(repair: RepairReport, premises: list[PremiseReport]) -> str:
    for premise in premises:
        if premise.record_id == repair.record_id and premise.key == repair.key:
            if premise.evidence is not None:
                return _short(premise.evidence.detail or premise.evidence.actor)
            if premise.detail:
                return _short(premise.detail)
    return ""


def corrections(decision: Decision) -> str:
    """The records this check corrected, as one sentence, or "" when it corrected none."""
    report = decision.report
    notes = []
    for repair in report.repairs:
        if repair.kind not in _CORRECTING:
            continue
        how = {"narrow": "narrowed to this scope", "relocate": "moved to the scope the evidence reaches",
               "retract": "observed absent", "supersede": "superseded"}[repair.kind]
        why = _evidence(repair, report.premises)
        notes.append(f"{repair.key} in {repair.scope} was {json.dumps(repair.old_value)}, now "
                     f"{json.dumps(repair.new_value)} ({how}{': ' + why if why else ''}; "
                     f"record {repair.new_record_id or repair.record_id})")
    return ("StateWise corrected its memory: " + "; ".join(notes) + ". ") if notes else ""


def resolved_state(decision: Decision) -> dict[str, Any]:
    """The state the gate evaluated, rebuilt from the premises the report holds (what is
    unresolved or absent stays out, as it did for the gate)."""
    state: dict[str, Any] = {}
    for premise in decision.report.premises:
        if premise.status is PremiseStatus.UNRESOLVED or premise.absent:
            continue
        state[premise.key] = resolved_value(premise)
    return state


def way_on(decision: Decision, contract: Contract) -> str:
    """The first remedy of a failing invariant whose changed action passes every invariant
    under the repaired state, as a sentence; "" when the contract derives none."""
    proposal = decision.report.proposal
    state = resolved_state(decision)
    failing = {check.name.removeprefix("invariant:") for check in decision.report.gate
               if not check.passed and check.name.startswith("invariant:")}
    for invariant in contract.invariants:
        if invariant.name not in failing:
            continue
        for remedy in invariant.instead:
            candidate = _changed(proposal, remedy.args, state)
            if candidate is None or contract.violations(candidate, state):
                continue
            shown = {name: str(value) for name, value in candidate.args.items()}
            try:
                said = remedy.say.format_map(shown)
            except (KeyError, ValueError, IndexError):
                said = remedy.say
            return f"What passes under the repaired state: {said}. "
    return ""


def _changed(action: Action, changes: dict[str, Any], state: dict[str, Any]) -> Action | None:
    args = {name: value for name, value in action.args.items() if name != "command" or "command" in changes}
    for name, value in changes.items():
        if isinstance(value, str) and value.startswith("state:"):
            key = value.removeprefix("state:")
            if key not in state:
                return None  # the contract cannot say what it would be
            value = state[key]
        args[name] = value
    if args == dict(action.args):
        return None
    return action.model_copy(update={"args": args})


def deny_reason(decision: Decision) -> str:
    """The stop's reason for a deny: each failed gate check, where a premise waiting for the
    developer is named as such without its question (the question goes to a developer only in
    an ask; in a deny the agent would have to answer it, or nobody would)."""
    failed = [check for check in decision.report.gate if not check.passed]
    if not failed:
        return decision.reason
    waiting = {p.key: p for p in decision.report.premises
               if p.status is PremiseStatus.UNRESOLVED and p.question is not None}
    parts = []
    for check in failed:
        if check.name == "premises_resolved" and waiting:
            others = [p for p in decision.report.premises
                      if p.status is PremiseStatus.UNRESOLVED and p.question is None]
            named = [f"{p.key} in {p.scope}: {p.missing}" for p in others]
            named += [f"{p.key} in {p.scope} is the developer's to confirm (not asked: the call is stopped on "
                      "the evidence anyway)" for p in waiting.values()]
            parts.append(f"{check.name}: {'; '.join(named)}")
            continue
        parts.append(f"{check.name}: {check.detail}")
    return "; ".join(parts)
