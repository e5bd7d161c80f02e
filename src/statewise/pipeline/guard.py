"""The guard: the paper's pipeline (Figure 3) between a proposal and its execution.

``Guard.check(task, proposal)`` runs attribution, resolution, repair, replanning and the gate,
and returns a :class:`Decision`: execute the checked action, or stop and say why. A stop is a
decision, not an exception; if any stage raises, the decision is a safe stop naming that
stage. Each stage can be switched off by name for ablations (``GuardConfig.ablation``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.actions import Action, action_distance
from statewise.contract import Contract, Risk, builtin_contract
from statewise.expressions import state_keys_read
from statewise.pipeline.attribution import PROBE_KINDS, AttributionSettings, attribute, attribute_stop
from statewise.pipeline.calls import CostMeter, PlannerCalls
from statewise.pipeline.gate import run_gate, slot_qualified_keys
from statewise.pipeline.repair import apply_repair, learn
from statewise.pipeline.report import (
    CandidateReport,
    Decision,
    GateCheck,
    GuardReport,
    PremiseReport,
    PremiseStatus,
    RepairReport,
    Verdict,
)
from statewise.pipeline.resolution import Resolver, observed_elsewhere, resolved_value
from statewise.planners.base import ContextRecord, Planner, PlanningContext, Task
from statewise.records import Record, Retrieval
from statewise.scopes import TaskScope
from statewise.store.base import Store

if TYPE_CHECKING:
    # Only the types: a hook call has no channel, and statewise.clarify's classes cost its
    # process a few milliseconds (the caller that makes a channel has imported it).
    from statewise.clarify import ApprovalChannel, ClarificationChannel

__all__ = ["STAGES", "Guard", "GuardConfig", "slot_qualified_keys"]

# Every value a developer could state for a key of these types, so an unstated key of one of
# them can be tried exhaustively; any other type is open-ended.
_ENUMERABLE: dict[str, list[Any]] = {"bool": [True, False], "list": [[]]}


#: Stages that an ablation can switch off, as ``no_<stage>``.
STAGES = ("attribution", "resolution", "repair", "typed_grounding", "replan", "gate")


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """Settings of one guard. ``disabled`` names stages switched off (see STAGES)."""

    disabled: frozenset[str] = frozenset()
    probe_budget: int = 48
    samples: int = 3
    probe_kinds: tuple[str, ...] = PROBE_KINDS
    max_rounds: int = 3
    learn_missing_facts: bool = True
    #: Probe a stop for the records that caused it, and repair them when they are wrong (a
    #: wrong record can block work as surely as it can cause harm). False: a stop stands.
    examine_stops: bool = True
    #: From this risk class up, machine-observable premises are observed even when the
    #: reliability checks pass (a fresh, authoritative record can still be wrong by now).
    #: None: the reliability checks alone settle them, as in the paper.
    verify_from_risk: str | None = "medium"
    #: ...except a record confirmed this recently (seconds): a repair or an observation made a
    #: moment ago is reused, not observed again.
    recheck_after: float = 300.0

    def __post_init__(self) -> None:
        unknown = set(self.disabled) - set(STAGES)
        if unknown:
            raise ValueError(f"unknown stage(s) {sorted(unknown)}; stages are {', '.join(STAGES)}")
        if self.verify_from_risk is not None and self.verify_from_risk not in {r.value for r in Risk}:
            raise ValueError(f"verify_from_risk must be one of {', '.join(r.value for r in Risk)} or None, "
                             f"not {self.verify_from_risk!r}")

    @classmethod
    def ablation(cls, name: str, **settings: Any) -> GuardConfig:
        """``GuardConfig.ablation("no_gate")``; ``"full"`` or ``"statewise"`` disables nothing."""
        if name in ("full", "statewise"):
            return cls(**settings)
        if not name.startswith("no_") or name[3:] not in STAGES:
            raise ValueError(f"unknown ablation {name!r}; use full or no_<stage> for stage in {', '.join(STAGES)}")
        return cls(disabled=frozenset({name[3:]}), **settings)

    def enabled(self, stage: str) -> bool:
        return stage not in self.disabled


def _context(retrieval: Retrieval, overrides: Mapping[str, Any] | None = None,
             removed: Iterable[str] = ()) -> tuple[PlanningContext, list[Record]]:
    """The planner's context: fresh records, then stale ones (flagged), most specific per key.
    ``overrides`` and ``removed`` carry the no_repair ablation's transient corrections."""
    gone = set(removed)
    records = [r for r in retrieval.records + retrieval.stale if r.id not in gone]
    stale = {r.id for r in retrieval.stale}
    items = []
    for record in records:
        item = ContextRecord.from_record(record, stale=record.id in stale)
        if overrides and record.id in overrides:
            item = replace(item, value=overrides[record.id])
        items.append(item)
    return PlanningContext.of(items), records


@dataclass
class _Check:
    """The mutable working state of one check; frozen into the report at the end."""

    meter: CostMeter = field(default_factory=CostMeter)
    stage: str = "retrieval"
    candidates: list[CandidateReport] = field(default_factory=list)
    premises: dict[str, PremiseReport] = field(default_factory=dict)  # by record id
    gate_state_reports: list[PremiseReport] = field(default_factory=list)
    repairs: list[RepairReport] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)  # no_repair: transient corrections
    removed: set[str] = field(default_factory=set)
    rounds: int = 0
    learned: int = 0  # facts the gate learned or corrected in the store (a reason to replan)


class Guard:
    """Checks proposals against the persistent store before they execute.

    ``planner`` is the planner whose proposals are checked (used for counterfactual probes and
    to replan); without one (an agent behind a hook), every record the contract binds to the
    action is verified and a proposal that relied on a wrong record is stopped with the
    correction, so the agent can re-plan. ``workspace`` is the directory verifiers observe.
    """

    def __init__(
        self,
        store: Store,
        contract: Contract | None = None,
        planner: Planner | None = None,
        *,
        clarifier: ClarificationChannel | None = None,
        approver: ApprovalChannel | None = None,
        config: GuardConfig | None = None,
        workspace: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.contract = contract or builtin_contract()
        self.planner = planner
        self.clarifier = clarifier
        self.approver = approver
        self.config = config or GuardConfig()
        self.workspace = Path(workspace) if workspace is not None else None
        self.environ = environ

    # --- the pipeline -----------------------------------------------------------------

    def _retrieve(self, scope: TaskScope) -> Retrieval:
        """The records that apply to a task in ``scope``, without the machine facts observed in
        another workspace (:func:`observed_elsewhere`). Near misses are for people reading the
        store; the guard needs only what applies."""
        retrieval = self.store.retrieve(scope, near_miss_limit=0)
        elsewhere = [record for record in (*retrieval.records, *retrieval.shadowed, *retrieval.stale)
                     if observed_elsewhere(record, scope, self.contract)]
        if not elsewhere:
            return retrieval
        dropped = {record.id for record in elsewhere}
        return retrieval.model_copy(update={
            "records": [r for r in retrieval.records if r.id not in dropped],
            "shadowed": [r for r in retrieval.shadowed if r.id not in dropped],
            "stale": [r for r in retrieval.stale if r.id not in dropped],
            "near_misses": [*retrieval.near_misses, *elsewhere]})

    def check(self, task: Task, proposal: Action | None = None) -> Decision:
        """Decide whether ``proposal`` (or, if None, the planner's own proposal) may run."""
        work = _Check()
        planner = PlannerCalls(self.planner, work.meter) if self.planner is not None else None
        workspace = self.workspace or (Path(task.workspace) if task.workspace else
                                       Path(task.scope.workspace) if task.scope.workspace else None)
        resolver = Resolver(self.contract, task.scope, workspace, work.meter, clarifier=self.clarifier,
                            environ=self.environ)
        original = proposal
        try:
            # Near misses are for people reading the store; the guard needs only what applies.
            retrieval = self._retrieve(task.scope)
            context, records = _context(retrieval)
            if proposal is None:
                work.stage = "planning"
                if planner is None:
                    raise ValueError("no proposal was given and the guard has no planner")
                proposal = planner.plan(task, context)
                original = proposal
            if proposal.is_stop:
                if planner is not None and self.config.examine_stops and self.config.enabled("attribution"):
                    return self._examine_stop(task, work, proposal, retrieval, (context, records), resolver,
                                              planner)
                return self._finish(task, work, proposal, Verdict.STOP, None,
                                    f"the proposal is a stop: {proposal.reason}", [])
            # Nothing has changed the proposal yet: it is both the original and the current one.
            return self._decide(task, work, proposal, proposal, retrieval, (context, records), resolver, planner,
                                replan_after_learning=True)
        except Exception as error:  # noqa: BLE001 - the guard never lets an action through on a failure
            stage = work.stage
            return self._finish(
                task, work, original or Action.stop("no proposal"), Verdict.STOP, None,
                f"stage {stage} failed: {type(error).__name__}: {error}", [], failed_stage=stage,
                blocked_by=[f"stage:{stage}"],
            )

    def _examine_stop(self, task: Task, work: _Check, proposal: Action, retrieval: Retrieval,
                      planning: tuple[PlanningContext, list[Record]], resolver: Resolver,
                      planner: PlannerCalls) -> Decision:
        """Find the records behind a stop, resolve them, and when a repair turns the stop into
        an action, check that action from the start. Otherwise the stop stands."""
        context, records = planning
        work.rounds += 1
        work.stage = "attribution"
        settings = AttributionSettings(probe_budget=self.config.probe_budget, samples=self.config.samples,
                                       probe_kinds=self.config.probe_kinds)
        found = attribute_stop(task, proposal, context, records, retrieval.shadowed, self.contract, planner,
                               settings)
        work.candidates.extend(found.candidates)
        defects = []
        for record in found.premises:
            work.stage = "resolution"
            if not self.config.enabled("resolution"):
                break
            # The stop itself is in question, and observing a fact is read-only and cheap.
            report = resolver.resolve(record, retrieval.records + retrieval.shadowed + retrieval.stale, observe=True)
            work.stage = "repair"
            report = self._repair(work, record, report)
            work.premises[record.id] = report
            if report.status is PremiseStatus.DEFECTIVE:
                defects.append(record.key)
        # Facts the stop rested on that nobody recorded: establish them from their authority
        # (observe a machine fact, ask the developer for intent), as the gate does for its keys.
        present = {r.key for r in records}
        for key in proposal.basis or ():
            if key in present or self.contract.state_spec(key) is None or not self.config.enabled("resolution"):
                continue
            work.stage = "resolution"
            report = resolver.resolve_missing(key, ask_developer=True)
            work.gate_state_reports.append(report)
            if self._learn(work, report):
                defects.append(key)
        stop_reason = f"the proposal is a stop: {proposal.reason}"
        if defects and self.config.enabled("replan"):
            work.stage = "replan"
            refreshed = self._retrieve(task.scope)
            replanning = _context(refreshed, work.overrides, work.removed)
            replanned = planner.plan(task, replanning[0])
            if not replanned.is_stop:
                return self._decide(task, work, proposal, replanned, refreshed, replanning, resolver, planner,
                                    replan_after_learning=True)
            return self._finish(task, work, proposal, Verdict.STOP, None,
                                f"replanned from the repaired state to a stop: {replanned.reason}", [],
                                replanned=replanned)
        if found.premises:
            settled = ", ".join(f"{p.key}={p.value!r} ({p.status.value})" for p in work.premises.values())
            stop_reason += f"; the records behind it: {settled}"
        return self._finish(task, work, proposal, Verdict.STOP, None, stop_reason, [])

    def _decide(self, task: Task, work: _Check, original: Action, current: Action, retrieval: Retrieval,
                planning: tuple[PlanningContext, list[Record]], resolver: Resolver, planner: PlannerCalls | None,
                *, replan_after_learning: bool) -> Decision:
        """Attribution, resolution, repair and replanning rounds for ``current``, then the gate.
        ``planning`` is the planning context built from ``retrieval`` and its records."""
        context, records = planning
        planned_from_repaired = True
        settings = AttributionSettings(
            probe_budget=self.config.probe_budget, samples=self.config.samples,
            probe_kinds=self.config.probe_kinds, counterfactual=self.config.enabled("attribution"),
        )
        for _ in range(self.config.max_rounds):
            work.rounds += 1
            work.stage = "attribution"
            found = attribute(task, current, context, records, retrieval.shadowed, self.contract, planner, settings)
            work.candidates.extend(found.candidates)
            fresh = [r for r in found.premises if r.id not in work.premises]
            if not fresh:
                break
            defects = 0
            for record in fresh:
                work.stage = "resolution"
                if self.config.enabled("resolution"):
                    report = resolver.resolve(record, retrieval.records + retrieval.shadowed + retrieval.stale,
                                              observe=self._observe_before(current, record, work))
                else:
                    report = PremiseReport(record_id=record.id, key=record.key, scope=record.scope,
                                           value=record.value, status=PremiseStatus.VALID, route="none",
                                           detail="resolution disabled: taken as stored")
                work.stage = "repair"
                report = self._repair(work, record, report)
                work.premises[record.id] = report
                defects += report.status is PremiseStatus.DEFECTIVE
            if not defects:
                break
            planned_from_repaired = False
            if planner is None or not self.config.enabled("replan"):
                break
            work.stage = "replan"
            retrieval = self._retrieve(task.scope)
            context, records = _context(retrieval, work.overrides, work.removed)
            replanned = planner.plan(task, context)
            planned_from_repaired = True
            if action_distance(replanned, current).same or replanned.is_stop:
                current = replanned
                break
            current = replanned

        if current.is_stop:
            return self._finish(task, work, original, Verdict.STOP, None,
                                f"replanned from the repaired state to a stop: {current.reason}", [],
                                replanned=current)
        work.stage = "gate"
        if not self.config.enabled("gate"):
            return self._finish(task, work, original, Verdict.EXECUTE, current,
                                "gate disabled: executing the replanned action unchecked", [], replanned=current)
        state = self._gate_state(work, resolver, current, retrieval)
        if replan_after_learning and work.learned and planner is not None and self.config.enabled("replan"):
            # The gate established facts the store lacked, or corrected a record the planner's
            # proposal did not visibly depend on; the planner may plan better from them. A
            # different proposal is checked from the start, once.
            work.stage = "replan"
            refreshed = self._retrieve(task.scope)
            replanning = _context(refreshed, work.overrides, work.removed)
            replanned = planner.plan(task, replanning[0])
            if not action_distance(replanned, current).same:
                return self._decide(task, work, original, replanned, refreshed, replanning, resolver, planner,
                                    replan_after_learning=False)
            work.stage = "gate"
        checks = run_gate(
            current, contract=self.contract, state=state, premises=list(work.premises.values()),
            planned_from_repaired_state=planned_from_repaired, approver=self.approver, meter=work.meter,
            task_text=task.text, state_reports=work.gate_state_reports, scope=task.scope,
        )
        failed = [c for c in checks if not c.passed]
        if failed:
            reason = "; ".join(f"{c.name}: {c.detail}" for c in failed)
            return self._finish(task, work, original, Verdict.STOP, None, reason, checks, replanned=current,
                                blocked_by=[c.name for c in failed])
        return self._finish(task, work, original, Verdict.EXECUTE, current,
                            f"every check passed: {current.describe()}", checks, replanned=current)

    # --- helpers ----------------------------------------------------------------------

    def _observe_before(self, action: Action, record: Record, work: _Check) -> bool:
        """Whether ``action`` is risky enough to observe machine facts the reliability checks
        would accept (``GuardConfig.verify_from_risk``). A record confirmed within
        ``recheck_after`` seconds, or written by this check from evidence, is not observed again."""
        threshold = self.config.verify_from_risk
        if threshold is None or any(repair.new_record_id == record.id for repair in work.repairs):
            return False
        confirmed = record.time.verified_at
        if confirmed is not None and (datetime.now(UTC) - confirmed).total_seconds() < self.config.recheck_after:
            return False
        name = self.contract.operation_name(action.tool, action.operation)
        spec = self.contract.operation(name) if name else None
        risk = spec.risk if spec is not None else Risk(action.risk) if action.risk else Risk.HIGH
        return risk.rank >= Risk(threshold).rank

    def _repair(self, work: _Check, record: Record, report: PremiseReport) -> PremiseReport:
        if report.status is PremiseStatus.UNRESOLVED:
            return report
        if not self.config.enabled("repair"):
            if report.status is PremiseStatus.DEFECTIVE:
                if report.absent or report.evidence is None:
                    work.removed.add(record.id)
                else:
                    work.overrides[record.id] = report.evidence.value
                work.repairs.append(RepairReport(kind="transient", record_id=record.id, key=record.key,
                                                 scope=record.scope, old_value=record.value,
                                                 new_value=resolved_value(report)))
            return report
        repair, report = apply_repair(self.store, record, report, grounded=self.config.enabled("typed_grounding"))
        if repair is not None:
            work.repairs.append(repair)
        return report

    def _gate_state(self, work: _Check, resolver: Resolver, action: Action, retrieval: Retrieval) -> dict[str, Any]:
        """The resolved state the gate evaluates invariants over."""
        keys = list(dict.fromkeys([*self.contract.invariant_keys(action), *slot_qualified_keys(self.contract, action)]))
        by_key = {p.key: p for p in work.premises.values()}
        applying = {r.key: r for r in retrieval.stale + retrieval.records}  # fresh wins over stale
        state: dict[str, Any] = {}
        for key in keys:
            report = by_key.get(key)
            if report is None and key in applying:
                record = applying[key]
                if self.config.enabled("resolution"):
                    report = resolver.resolve(record, retrieval.records + retrieval.shadowed,
                                              observe=self._observe_before(action, record, work))
                    report = self._repair(work, record, report)
                    if report.status is PremiseStatus.DEFECTIVE and self.config.enabled("repair"):
                        work.learned += 1  # the store changed under the plan: replan from it
                else:
                    report = PremiseReport(record_id=record.id, key=key, scope=record.scope, value=record.value,
                                           status=PremiseStatus.VALID, route="none",
                                           detail="resolution disabled: taken as stored")
                work.gate_state_reports.append(report)
            elif report is None and self.config.enabled("resolution"):
                spec = self.contract.state_spec(key)
                if spec is not None and (spec.authority.value == "developer"
                                         or self.contract.verifier_for(key) is None):
                    # Nobody stated it and there is nothing to consult (a developer's value is
                    # asked for below when a failing invariant needs it; a fact only tool
                    # output reveals has simply not been seen): not a premise.
                    continue
                report = resolver.resolve_missing(key)
                work.gate_state_reports.append(report)
                if self._worth_storing(key):
                    self._learn(work, report)
            if report is None or report.status is PremiseStatus.UNRESOLVED or report.absent:
                continue  # unknown: an invariant that needs it fails closed
            state[key] = resolved_value(report)
        if self.config.enabled("resolution"):
            # A developer-owned value nobody stated is asked for only when an invariant that
            # applies to this very action needs it (not, say, force-push permission for a push
            # that does not force). Without a clarification channel the question goes into the
            # report for the caller (a hook turns it into "ask"), but only when the developer's
            # answer could settle every failing invariant: a push to a protected branch is a
            # deny, not a question about force-push permission.
            needed = (self._keys_failing_invariants_need(action, state) if self.clarifier is not None
                      else self._developer_questions(action, state))
            failing = [r for r in self.contract.violations(action, state) if r.applies]
            for key in needed:
                spec = self.contract.state_spec(key)
                if key in applying or spec is None or spec.authority.value != "developer":
                    continue
                rules = [r.message for r in failing if any(
                    key in state_keys_read(text) for i in self.contract.invariants if i.name == r.name
                    for text in (i.when, i.check))]
                report = resolver.resolve_missing(key, ask_developer=True, because=" ".join(rules[:2]))
                work.gate_state_reports.append(report)
                self._learn(work, report)
                if report.status is PremiseStatus.VALID:
                    state[key] = resolved_value(report)
        return state

    def _developer_questions(self, action: Action, state: Mapping[str, Any]) -> list[str]:
        """The developer-owned keys whose answers could make every failing invariant hold, or
        none when one fails on the known facts alone (e.g. a path the project already
        protects: no answer changes that, so it is a deny, not a question).

        Per failing invariant, the unstated developer keys it reads are tried with the answers
        that can be enumerated (true/false for a bool, an empty list for a list); a key whose
        answer alone makes it hold is the question. When none does, keys of other types (a
        path, a string) are the question, since some value of theirs might satisfy it."""
        keys: dict[str, None] = {}
        for result in self.contract.violations(action, state):
            if not result.applies:
                continue
            invariant = next(i for i in self.contract.invariants if i.name == result.name)
            unstated = {
                k: spec for text in (invariant.when, invariant.check) for k in state_keys_read(text)
                if k not in state and (spec := self.contract.state_spec(k)) is not None
                and spec.authority.value == "developer"}
            enumerable = {k: _ENUMERABLE.get(spec.value_type.value) for k, spec in unstated.items()}
            crux = [k for k, options in enumerable.items() if options is not None
                    and any(self._holds_with(invariant.name, action, {**state, k: option}) for option in options)]
            open_ended = [k for k, options in enumerable.items() if options is None]
            if not crux and not open_ended:
                return []  # no answer makes this one hold: a deny
            keys.update(dict.fromkeys(crux or open_ended))
        return list(keys)

    def _holds_with(self, name: str, action: Action, state: Mapping[str, Any]) -> bool:
        return all(r.holds for r in self.contract.check_invariants(action, state) if r.name == name)

    def _worth_storing(self, key: str) -> bool:
        """A fact whose TTL is shorter than the guard's re-check interval is observed on every
        check and never stored: a stored copy could only go stale."""
        spec = self.contract.state_spec(key)
        ttl = spec.ttl_seconds if spec is not None else None
        return ttl is None or ttl >= self.config.recheck_after

    def _keys_failing_invariants_need(self, action: Action, state: Mapping[str, Any]) -> list[str]:
        failing = {result.name for result in self.contract.violations(action, state) if result.applies}
        keys: dict[str, None] = {}
        for invariant in self.contract.invariants:
            if invariant.name in failing:
                for text in (invariant.when, invariant.check):
                    keys.update(dict.fromkeys(k for k in state_keys_read(text) if k not in state))
        return list(keys)

    def _learn(self, work: _Check, report: PremiseReport) -> bool:
        """Store a fact the gate established for a key the store lacked; True if it did."""
        if not (self.config.learn_missing_facts and self.config.enabled("repair")):
            return False
        learned = learn(self.store, report)
        if learned is not None:
            work.repairs.append(learned)
            work.learned += 1
        return learned is not None

    def _finish(
        self, task: Task, work: _Check, proposal: Action, verdict: Verdict, action: Action | None, reason: str,
        checks: list[GateCheck], *, replanned: Action | None = None, failed_stage: str | None = None,
        blocked_by: list[str] | None = None,
    ) -> Decision:
        report = GuardReport(
            task=task.text, task_scope=str(task.scope), proposal=proposal, verdict=verdict, reason=reason,
            action=action, blocked_by=blocked_by or [], candidates=work.candidates,
            premises=list(work.premises.values()) + work.gate_state_reports, repairs=work.repairs,
            replanned=replanned if replanned is not None and not action_distance(replanned, proposal).same else None,
            rounds=work.rounds, gate=checks, costs=work.meter.freeze(),
            disabled_stages=sorted(self.config.disabled), failed_stage=failed_stage,
            planner=getattr(self.planner, "name", None) if self.planner is not None else None,
        )
        return Decision(verdict=verdict, action=action, reason=reason, report=report)


def report_json(decision: Decision) -> str:
    """The decision's report as indented JSON."""
    return json.dumps(decision.report.model_dump(mode="json"), indent=2)
