"""Stage 1, attribution: which retrieved records does the proposal really depend on?

Candidates are the retrieved records the contract binds to the proposal's operation (slot
``depends_on`` and ``links``) plus records whose value or qualifier appears literally in the
action (text links). For each candidate, counterfactual probes change only that record in the
planning context (remove it, mask its value, or give it a plausible other value), replan
with everything else fixed, and compare with ``action_distance``.

* dependent: some probe kind changed the action in every sample (the remaining kinds are
  then skipped: they could only confirm it);
* inconclusive: the planner failed, samples disagreed, or the planner does not reproduce
  the proposal (it came from another agent) — a bound candidate is then still verified;
* premises D+ = bound and (dependent or inconclusive).

Without a planner (an agent whose proposals arrive through a hook), every bound candidate
is a premise: dependence cannot be probed, so it is verified.

A *stop* has no slots to bind, yet a wrong record can make the planner refuse work it
should do. :func:`attribute_stop` probes the retrieved records of declared keys (those
whose values the stop's reason mentions first) and returns the *restrictive premises*: the
records without which, or with another value of which, the planner acts instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from statewise.actions import Action, action_distance
from statewise.contract import Contract
from statewise.errors import PlannerError
from statewise.pipeline.calls import PlannerCalls
from statewise.pipeline.report import CandidateReport, ProbeReport
from statewise.planners.base import MASKED, PlanningContext, Task
from statewise.records import Record, base_key
from statewise.values import ValueType

__all__ = ["Attribution", "AttributionSettings", "alternative_value", "attribute", "attribute_stop"]

PROBE_KINDS = ("remove", "mask", "alternative")


@dataclass(frozen=True, slots=True)
class AttributionSettings:
    probe_budget: int = 48  # planner calls spent on probes (cache hits are free)
    samples: int = 3  # per probe, for a stochastic planner (a deterministic one uses 1)
    probe_kinds: tuple[str, ...] = PROBE_KINDS
    counterfactual: bool = True  # False: the no_attribution ablation (text links only)


@dataclass
class Attribution:
    candidates: list[CandidateReport] = field(default_factory=list)
    premises: list[Record] = field(default_factory=list)
    reproduced: bool | None = None  # did the planner reproduce the proposal unprobed?


def alternative_value(record: Record, choices: Sequence[str] | None, conflicting: Iterable[Any] = ()) -> Any:
    """A plausible other value of the record's type: a conflicting record's value if there
    is one, else a nearby value of the same type."""
    for value in conflicting:
        if value != record.value:
            return value
    value = record.value
    match record.value_type:
        case ValueType.BOOL:
            return not value
        case ValueType.INT:
            return value + 1
        case ValueType.ENUM:
            return next((c for c in choices or () if c != value), f"{value}-other")
        case ValueType.VERSION:
            head, _, rest = value.lstrip("v").partition(".")
            bumped = str(int(head) + 1) if head.isdigit() else "0"
            return bumped + (f".{rest}" if rest else "")
        case ValueType.LIST:
            return value[1:] if value else ["other"]
        case ValueType.PATH:
            return f"{value}.other"
    return f"{value}-other" if value else "other"


def _action_texts(action: Action) -> list[str]:
    """The strings of an action a record's value could appear in."""
    texts = [action.target] if action.target else []
    for value in action.args.values():
        if isinstance(value, list):
            texts.extend(value)
        elif isinstance(value, str):
            texts.append(value)
    return texts


def _text_linked(record: Record, haystack: str) -> bool:
    """Does the record's value or qualifier appear literally in ``haystack`` (the action's
    texts joined by NUL, a character no needle holds, so one search covers them all)?"""
    value = record.value
    if isinstance(value, str):
        if len(value) >= 2 and value in haystack:
            return True
    elif isinstance(value, list):
        if any(len(v) >= 2 and v in haystack for v in value):
            return True
    if "[" in record.key:
        qualifier = record.key[len(base_key(record.key)) + 1 : -1]
        return bool(qualifier) and qualifier in haystack
    return False


def attribute(
    task: Task,
    proposal: Action,
    context: PlanningContext,
    records: Sequence[Record],
    shadowed: Sequence[Record],
    contract: Contract,
    planner: PlannerCalls | None,
    settings: AttributionSettings,
) -> Attribution:
    """Find the premises of ``proposal`` among ``records`` (the records in ``context``)."""
    result = Attribution()
    candidates: list[tuple[Record, str, bool]] = []
    operation = contract.operation_name(proposal.tool, proposal.operation)
    # Only keys the operation names can bind; the full (qualifier-aware) check runs on those.
    bindable = {base_key(key) for key in contract.keys_for_operation(operation)} if operation else set()
    texts = "\x00".join(_action_texts(proposal))
    for record in records:
        bound = base_key(record.key) in bindable and contract.binds(record, proposal)
        if bound:
            candidates.append((record, "binding", True))
        elif _text_linked(record, texts):
            candidates.append((record, "text", False))

    if not settings.counterfactual:
        # Ablation: no probes; only what appears literally in the action is taken as a premise.
        for record, link, bound in candidates:
            premise = link == "text" or (bound and _text_linked(record, texts))
            result.candidates.append(_candidate(record, link, bound, premise=premise,
                                                note="no counterfactual attribution"))
            if premise:
                result.premises.append(record)
        return result

    if planner is None:
        for record, link, bound in candidates:
            result.candidates.append(_candidate(record, link, bound, inconclusive=bound, premise=bound,
                                                note="no planner to probe: bound records are verified"))
            if bound:
                result.premises.append(record)
        return result

    samples = settings.samples if planner.stochastic else 1
    reference = _sample(planner, task, context, samples)
    reproduced = all(isinstance(a, Action) and action_distance(a, proposal).same for a in reference)
    result.reproduced = reproduced
    budget = settings.probe_budget
    conflicts = {r.key: [s.value for s in shadowed if s.key == r.key] for r, _, _ in candidates}

    # Bound candidates first: they are the ones that can become premises.
    for record, link, bound in sorted(candidates, key=lambda c: not c[2]):
        probes: list[ProbeReport] = []
        dependent = inconclusive = False
        note = "" if reproduced else "the planner does not reproduce the proposal"
        for kind in settings.probe_kinds:
            if budget < samples:
                note = "probe budget exhausted"
                inconclusive = True
                break
            spec = contract.state_spec(record.key)
            alternative = None
            if kind == "remove":
                probed = context.without(record.id)
            elif kind == "mask":
                probed = context.with_value(record.id, MASKED)
            else:
                alternative = alternative_value(record, spec.choices if spec else None, conflicts.get(record.key, ()))
                probed = context.with_value(record.id, alternative)
            actions = _sample(planner, task, probed, samples)
            budget -= samples
            errors = [a for a in actions if isinstance(a, PlannerError)]
            planned = [a for a in actions if isinstance(a, Action)]
            differences = [action_distance(a, proposal) for a in planned]
            # Built from values this module made and checked; skip re-validation on the hot path.
            report = ProbeReport.model_construct(
                kind=kind, alternative=alternative, actions=planned,
                distance=max((d.distance for d in differences), default=None),
                changed=sorted({c for d in differences for c in d.changed}),
                error=str(errors[0]) if errors else None,
            )
            probes.append(report)
            changed = [not d.same for d in differences]
            if errors or (changed and not all(changed) and any(changed)):
                inconclusive = True
            elif changed and all(changed):
                dependent = True
                # Dependence is established; further probe kinds could only confirm it.
                break
        if not reproduced:
            inconclusive = True
        premise = bound and (dependent or inconclusive)
        result.candidates.append(_candidate(record, link, bound, dependent=dependent,
                                            inconclusive=inconclusive and not dependent,
                                            premise=premise, note=note, probes=probes))
        if premise:
            result.premises.append(record)
    return result


def attribute_stop(
    task: Task,
    proposal: Action,
    context: PlanningContext,
    records: Sequence[Record],
    shadowed: Sequence[Record],
    contract: Contract,
    planner: PlannerCalls,
    settings: AttributionSettings,
) -> Attribution:
    """Find the records that made the planner propose the stop ``proposal``.

    A record is a (restrictive) premise when every sample of some probe turns the stop into
    an action, or when the stop is linked to it: the planner names its key in the stop's
    ``basis``, or the stop's reason quotes its value. A planner that stops whenever a fact is
    unknown does not act when the record is removed, so a linked record is examined even
    when no probe moves the planner (as an inconclusive bound record is verified)."""
    result = Attribution()
    samples = settings.samples if planner.stochastic else 1
    reference = _sample(planner, task, context, samples)
    result.reproduced = all(isinstance(a, Action) and a.is_stop for a in reference)
    if not result.reproduced:
        return result  # the stop came from elsewhere (another agent); nothing to probe against
    reason = proposal.reason or ""
    basis = set(proposal.basis or ())

    def linked(record: Record) -> bool:
        return record.key in basis or base_key(record.key) in basis or _text_linked(record, reason)

    declared = sorted((r for r in records if contract.state_spec(r.key) is not None), key=lambda r: not linked(r))
    conflicts = {r.key: [s.value for s in shadowed if s.key == r.key] for r in declared}
    budget = settings.probe_budget
    for record in declared:
        is_linked = linked(record)
        probes: list[ProbeReport] = []
        dependent = False
        for kind in ("remove", "alternative"):
            if kind not in settings.probe_kinds or budget < samples:
                continue
            alternative = None
            if kind == "remove":
                probed = context.without(record.id)
            else:
                spec = contract.state_spec(record.key)
                alternative = alternative_value(record, spec.choices if spec else None, conflicts.get(record.key, ()))
                probed = context.with_value(record.id, alternative)
            actions = _sample(planner, task, probed, samples)
            budget -= samples
            planned = [a for a in actions if isinstance(a, Action)]
            acts = [not a.is_stop for a in planned]
            probes.append(ProbeReport.model_construct(
                kind=kind, alternative=alternative, actions=planned,
                distance=max((action_distance(a, proposal).distance for a in planned), default=None),
                changed=["operation"] if any(acts) else [],
                error=next((str(a) for a in actions if isinstance(a, PlannerError)), None),
            ))
            if len(planned) == samples and all(acts):
                dependent = True
                break
        if not probes and not is_linked:
            break  # the budget is spent, and the rest are not linked to the stop
        premise = dependent or is_linked
        note = ("restrictive: the planner acts without it" if dependent
                else "linked to the stop: examined" if is_linked else "")
        result.candidates.append(_candidate(record, "stop", is_linked, dependent=dependent,
                                            inconclusive=premise and not dependent, premise=premise, note=note,
                                            probes=probes))
        if premise:
            result.premises.append(record)
    return result


def _sample(planner: PlannerCalls, task: Task, context: PlanningContext, samples: int) -> list[Action | PlannerError]:
    outcomes: list[Action | PlannerError] = []
    for sample in range(samples):
        try:
            outcomes.append(planner.plan(task, context, sample))
        except PlannerError as error:
            outcomes.append(error)
    return outcomes


def _candidate(record: Record, link: str, bound: bool, **fields: Any) -> CandidateReport:
    defaults = {"dependent": False, "inconclusive": False, "premise": False, "note": "", "probes": []}
    return CandidateReport.model_construct(
        record_id=record.id, key=record.key, scope=record.scope, value=record.value, link=link, bound=bound,
        **{**defaults, **fields},
    )
