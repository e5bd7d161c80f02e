"""The baselines of RQ2 (paper section 5.3): interventions that do not repair persistent state.

Each class here is a *reimplementation of an idea* for this benchmark, written against the
same :class:`~statewise.bench.methods.Method` protocol as any third-party method and
registered through :func:`~statewise.bench.methods.register_method` when this module is
imported. None of them is the original system it is named after; they borrow the idea and
apply it to the benchmark's planner, store and contract (see ``docs/baselines.md``).

* ``bare_approval``: every side-effecting proposal goes to the developer (the action only);
* ``approval_with_rationale``: the same, with the planner's rationale and the records it used;
* ``clarification``: ask about every developer-owned record bound to the action, replan;
* ``provenance_screening``: the MemLineage idea: drop records of untrusted provenance, replan;
* ``risk_routed``: the Safety Sentry idea: execute / ask / refuse by the risk class;
* ``uncertainty_triggered``: the Ask-or-Assume idea: ask only when the planner is uncertain;
* ``tool_feedback``: the CRITIC idea: execute, read the tool's output, revise and retry once;
* ``live_refresh``: run the read-only verifiers before planning, update the context.

What none of them does: write to the persistent store. Every correction (an answer, a
screened record, a fact from tool output, a refreshed value) lives in this task's planning
context only, so the next task of a sequence sees the old record again.

**The simulated developer** (:class:`SimulatedDeveloper`) is one model shared by every
method. (The ``statewise`` method is given ``ScriptedClarifier`` and ``ScriptedApprover``,
which answer the questions and approval requests the guard makes exactly as this model
does: rules 0-2 below are the only ones its requests reach; the hook method's approver is the
same, :class:`statewise.bench.developer_reads.ReadingApprover`.) It knows the case's ``developer.intent`` (key -> the value the
developer means) and ``developer.approves`` (operations with standing approval, or "all"):

* a clarification question about a key in ``intent`` is confirmed when the value in doubt is
  the intended one and corrected to the intended value otherwise; any other key gets
  "unknown" (exactly :class:`statewise.clarify.ScriptedClarifier`);
* an approval request is answered in this order:

  0. the prompt's text states where the action lands, or a value StateWise evaluated, and that
     contradicts what the developer was told or means (:func:`statewise.bench.developer_reads.shown_contradiction`): a target
     ``target="production"`` (the way StateWise's ask names the production target a command's
     configuration file places it in) other than the target the agent's action states (it
     releases to ``qa``), or a fact ``[KEY = VALUE (evidence)]`` whose key is in ``intent`` with
     another value: declined, whatever the standing approval (the developer reads the prompt:
     an approval of deployments is not an approval of this release to production). Only text
     in those two shapes is read; a prompt that shows neither is answered by the rules below;
  1. the operation is in ``approves`` (or ``approves`` is "all"): approved;
  2. the operation is not declared by the contract, or the contract says it
     ``requires_approval``: declined (that approval is the case's to give, through
     ``approves``; exactly :class:`statewise.clarify.ScriptedApprover`, which is what the guard
     asks, and only for such operations);
  3. the prompt shows a record whose key is in ``intent`` with a value other than the intended
     one: declined (the developer caught a wrong record);
  4. a contract invariant, evaluated over the facts the prompt shows (first shown record per
     key), evaluates to false: declined (the action visibly violates a stated policy). An
     invariant that needs a fact the prompt does not show cannot be evaluated and is *not*
     a visible violation;
  5. otherwise approved (a routine-looking action).

  So a prompt that shows only the action (bare approval, risk routing) is approved unless
  the operation needs explicit approval; the developer cannot see what memory the action
  came from. The developer knows nothing beyond ``intent``: machine facts (is ``main``
  protected?) are never known unless a prompt shows them.

**Costs** are counted as the guard counts them (:class:`statewise.pipeline.calls.CostMeter`):
model calls are distinct planner calls (a repeated identical call is a free cache hit),
tokens as the planner reports them, interactions are clarification questions plus approval
requests, verifier calls are calls of :func:`statewise.verifiers.verify_key`. The time the
planner, verifiers, the developer and (for ``tool_feedback``) the executed commands take is
kept out of ``guard_seconds``, the method's own overhead.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from statewise.actions import Action, action_distance
from statewise.bench.developer_reads import shown_contradiction
from statewise.bench.methods import METHODS, Method, MethodInput, MethodResult, register_method
from statewise.clarify import (
    Answer,
    AnswerKind,
    ApprovalRequest,
    Question,
    ScriptedClarifier,
)
from statewise.contract import Contract, Risk
from statewise.errors import PlannerError
from statewise.pipeline.calls import CostMeter, PlannerCalls
from statewise.planners.base import (
    MASKED,
    ContextRecord,
    Plan,
    Planner,
    PlanningContext,
    Task,
)
from statewise.records import Authority, Record, SourceKind
from statewise.scopes import Scope
from statewise.values import ValueType

__all__ = [
    "BASELINES",
    "ApprovalPrompt",
    "ApprovalWithRationale",
    "BareApproval",
    "Clarification",
    "LiveRefresh",
    "ProvenanceScreening",
    "RiskRouted",
    "SimulatedDeveloper",
    "ToolFeedback",
    "UncertaintyTriggered",
    "register",
    "trusted_provenance",
]


# --- the simulated developer -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApprovalPrompt(ApprovalRequest):
    """An approval request that may show more than the action: the planner's rationale, the
    records it used (``facts``) and the risk class. A plain :class:`ApprovalRequest` shows the
    action only."""

    rationale: str = ""
    facts: tuple[ContextRecord, ...] = ()
    risk: str | None = None


@dataclass
class SimulatedDeveloper:
    """The one simulated developer of the benchmark (see the module docstring for the model).

    It is a clarification channel (``ask``) and an approval channel (``approve``); every
    question and request is kept, with the reason of each approval decision in ``decisions``.
    """

    contract: Contract
    intent: Mapping[str, Any] = field(default_factory=dict)
    approves: frozenset[str] | None = frozenset()  # None: every operation ("all")
    asked: list[Question] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def for_input(cls, inp: MethodInput) -> SimulatedDeveloper:
        allow = inp.developer.approves
        return cls(contract=inp.contract, intent=dict(inp.developer.intent),
                   approves=None if allow == "all" else frozenset(allow))

    # Clarification: exactly the ScriptedClarifier.
    def ask(self, question: Question) -> Answer:
        self.asked.append(question)
        return ScriptedClarifier(self.intent, name="simulated-developer").ask(question)

    def approve(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        approved, why = self.judge(request)
        self.decisions.append({"action": request.action.describe(), "approved": approved, "why": why})
        return approved

    def judge(self, request: ApprovalRequest) -> tuple[bool, str]:
        """(approved, why) for one request, without recording it."""
        action = request.action
        seen = shown_contradiction(action, request.reason, self.intent)
        if seen is not None:
            return False, seen
        operation = self.contract.operation_name(action.tool, action.operation) or action.operation
        if self.approves is None or operation in self.approves or action.operation in self.approves:
            return True, f"standing approval for {operation}"
        spec = self.contract.operation(operation)
        if spec is None:
            return False, f"{operation} is not an operation the {self.contract.name} contract declares"
        if spec.requires_approval:
            return False, f"the contract requires explicit approval of {operation}, and the developer gave none"
        facts = [f for f in getattr(request, "facts", ()) if not f.masked]
        for fact in facts:
            if fact.key in self.intent and self.intent[fact.key] != fact.value:
                return False, (f"the prompt shows {fact.key} = {fact.value!r}; the developer means "
                               f"{self.intent[fact.key]!r}")
        shown: dict[str, Any] = {}
        for fact in facts:
            shown.setdefault(fact.key, fact.value)
        visible = [r for r in self.contract.check_invariants(action, shown)
                   if r.applies and not r.holds and r.error is None]
        if visible:
            return False, "visibly violates " + "; ".join(f"{r.name}: {r.message}" for r in visible)
        return True, "routine-looking: nothing shown contradicts the developer's intent or a stated policy"


# --- shared helpers ----------------------------------------------------------------------------


class _Episode:
    """One run of a baseline: the cost meter, the counted planner, the developer, the context."""

    def __init__(self, inp: MethodInput) -> None:
        self.inp = inp
        self.meter = CostMeter()
        self.planner = PlannerCalls(inp.planner, self.meter)
        self.developer = SimulatedDeveloper.for_input(inp)
        self.contract = inp.contract
        self.task = inp.task
        retrieval = inp.store.retrieve(inp.task.scope, near_miss_limit=0)
        stale = {r.id for r in retrieval.stale}
        #: The records the planner sees (fresh, then stale), as in methods.planning_context.
        self.records: list[Record] = retrieval.records + retrieval.stale
        self.context = PlanningContext.of(ContextRecord.from_record(r, stale=r.id in stale) for r in self.records)
        self.notes: dict[str, Any] = {}

    def plan(self, context: PlanningContext | None = None) -> Action:
        return self.planner.plan(self.task, self.context if context is None else context)

    def ask(self, key: str, scope: str, value: Any, record_id: str | None = None) -> Answer:
        spec = self.contract.state_spec(key)
        key_type = self.contract.key_type(key)
        shown = value if value is not None else "nothing"
        question = Question(key=key, scope=scope, value=value,
                            value_type=key_type.value_type if key_type is not None else ValueType.STRING,
                            text=self.contract.question_for(key, scope=scope, value=shown), record_id=record_id,
                            choices=spec.choices if spec is not None else None)
        self.meter.clarification_questions += 1
        with self.meter.outside():
            return self.developer.ask(question)

    def approve(self, request: ApprovalRequest) -> bool:
        self.meter.approvals_asked += 1
        with self.meter.outside():
            return self.developer.approve(request)

    def side_effecting(self, action: Action) -> bool:
        if action.is_stop:
            return False
        name = self.contract.operation_name(action.tool, action.operation)
        spec = self.contract.operation(name) if name else None
        return spec is None or spec.side_effects

    def result(self, proposal: Action, final: Action | None, *, reason: str = "", executed: bool = False,
               premises: Sequence[str] | None = None) -> MethodResult:
        go = final is not None and not final.is_stop
        costs = self.meter.freeze()
        if not reason:
            reason = final.reason if final is not None and final.is_stop else ""
        report = dict(self.notes)
        if self.developer.asked:
            report["questions"] = [{"key": q.key, "scope": q.scope, "value": _plain(q.value)}
                                   for q in self.developer.asked]
        if self.developer.decisions:
            report["approvals"] = self.developer.decisions
        return MethodResult(
            verdict="execute" if go else "stop", action=final if go else None, proposal=proposal, reason=reason,
            premises=tuple(premises) if premises is not None else None, model_calls=costs.planner_calls,
            tokens=costs.input_tokens + costs.output_tokens, verifier_calls=costs.verifier_calls,
            questions=costs.clarification_questions, approvals=costs.approvals_asked,
            guard_seconds=costs.guard_seconds, report=report or None, executed=executed and go,
        )


def _plain(value: Any) -> Any:
    return "<masked>" if value is MASKED else value


def bound_records(contract: Contract, action: Action, context: PlanningContext) -> list[ContextRecord]:
    """The context records the contract binds to ``action`` (a slot's ``depends_on`` or the
    operation's ``links``, qualifier-aware), plus those whose value appears literally in the
    action's target or arguments: what an agent would cite as the records its action used."""
    texts = [action.target] if action.target else []
    for value in action.args.values():
        texts.extend(value if isinstance(value, (list, tuple)) else [value] if isinstance(value, str) else [])
    chosen = []
    for record in context.records:
        if contract.binds(record.key, action):
            chosen.append(record)
            continue
        needles = [record.value] if isinstance(record.value, str) and len(record.value) >= 2 else []
        if isinstance(record.value, list):
            needles = [v for v in record.value if isinstance(v, str) and len(v) >= 2]
        if any(needle in text for needle in needles for text in texts if isinstance(text, str)):
            chosen.append(record)
    return chosen


def _owner(contract: Contract, key: str) -> Authority | None:
    spec = contract.state_spec(key)
    return spec.authority if spec is not None else None


def _risk(contract: Contract, action: Action) -> Risk:
    """The action's risk class: the contract's for its operation, raised by the action's own
    ``risk`` if that is higher; an undeclared operation is critical."""
    name = contract.operation_name(action.tool, action.operation)
    spec = contract.operation(name) if name else None
    risk = spec.risk if spec is not None else Risk.CRITICAL
    if action.risk is not None and Risk(action.risk).rank > risk.rank:
        risk = Risk(action.risk)
    return risk


# --- 1. bare approval ---------------------------------------------------------------------------


class BareApproval:
    """Bare approval: every side-effecting proposal is shown to the developer, as the action only.

    Idea: a human approves each action before it runs (the approval prompts of coding agents).
    Here: the planner proposes from its memory; a stop is accepted as is; any other proposal
    goes to the simulated developer as an :class:`ApprovalRequest` showing the action and the
    task. Approved: executed. Declined: the episode stops.
    Does not: show the developer any record, verify anything, ask about any record, replan,
    or write to the store (no memory repair).
    """

    name = "bare_approval"

    def run(self, inp: MethodInput) -> MethodResult:
        run = _Episode(inp)
        proposal = run.plan()
        if not run.side_effecting(proposal):
            return run.result(proposal, proposal)
        request = ApprovalRequest(action=proposal, reason="approve this action before it runs?", task=inp.task.text)
        if run.approve(request):
            return run.result(proposal, proposal)
        return run.result(proposal, None, reason=f"the developer declined {proposal.describe()}")


# --- 2. approval with rationale -------------------------------------------------------------------


class ApprovalWithRationale:
    """Approval with rationale: the approval prompt also explains the action.

    Idea: an approval request that shows why the agent wants to act, so that the human can
    spot a wrong premise. Here: the prompt (an :class:`ApprovalPrompt`) shows the action, the
    planner's rationale (``Action.reason``) and the records the action used — the context
    records the contract binds to the operation plus those whose value appears in the action
    (:func:`bound_records`). The simulated developer declines when a shown record contradicts
    its intent (so it catches a wrong record only when the prompt shows it *and* the developer
    knows the truth for that key) or when a shown fact makes a contract invariant fail;
    otherwise it approves. The shown records are reported as the method's premises (AP/AR).
    Does not: verify machine facts (the developer does not know them), correct the record,
    replan after a decline, or write to the store.
    """

    name = "approval_with_rationale"

    def run(self, inp: MethodInput) -> MethodResult:
        run = _Episode(inp)
        proposal = run.plan()
        if not run.side_effecting(proposal):
            return run.result(proposal, proposal)
        shown = bound_records(run.contract, proposal, run.context)
        request = ApprovalPrompt(action=proposal, reason="approve this action before it runs?", task=inp.task.text,
                                 rationale=proposal.reason, facts=tuple(shown), risk=str(_risk(run.contract, proposal)))
        run.notes["shown"] = [{"key": r.key, "value": _plain(r.value), "scope": r.scope} for r in shown]
        premises = [r.id for r in shown]
        if run.approve(request):
            return run.result(proposal, proposal, premises=premises)
        return run.result(proposal, None, reason=f"the developer declined {proposal.describe()}", premises=premises)


# --- 3. clarification ---------------------------------------------------------------------------


class Clarification:
    """Clarification: ask the developer about the developer-owned records behind the action.

    Idea: before acting, the agent asks the user about the information it relies on. Here:
    for the planner's proposal, every retrieved context record bound to the action whose key
    the contract gives to the developer (``authority: developer``) is asked about, one
    targeted question each (the contract's question template). A correction replaces that
    record's value in this task's planning context and the planner replans; a new proposal's
    not-yet-asked developer-owned records are asked about in turn (at most three rounds). A
    confirmation or "unknown" keeps the record as it is, and the agent acts.
    Does not: ask about keys that have no record, verify machine-owned facts (it asks nobody
    about them), or write a correction to the store: the next task retrieves the old record.
    """

    name = "clarification"
    max_rounds = 3

    def run(self, inp: MethodInput) -> MethodResult:
        run = _Episode(inp)
        proposal = run.plan()
        current, context, asked = proposal, run.context, set()
        corrections = []
        for _ in range(self.max_rounds):
            if not run.side_effecting(current):
                break
            targets = [r for r in bound_records(run.contract, current, context)
                       if r.id not in asked and not r.masked and _owner(run.contract, r.key) is Authority.DEVELOPER]
            changed = False
            for record in targets:
                asked.add(record.id)
                answer = run.ask(record.key, record.scope, record.value, record.id)
                if answer.kind is AnswerKind.CORRECT:
                    context = context.with_value(record.id, answer.value)
                    corrections.append({"key": record.key, "old": record.value, "new": answer.value})
                    changed = True
            if not changed:
                break
            current = run.plan(context)
        if corrections:
            run.notes["corrections"] = corrections
        return run.result(proposal, current)


# --- 4. provenance screening (the MemLineage idea) ---------------------------------------------------

_FIRST_HAND = {
    Authority.MACHINE: {SourceKind.OBSERVATION, SourceKind.TOOL_OUTPUT},
    Authority.DEVELOPER: {SourceKind.DEVELOPER},
    Authority.AGENT: {SourceKind.OBSERVATION, SourceKind.TOOL_OUTPUT},
}


def trusted_provenance(record: Record, contract: Contract) -> tuple[bool, str]:
    """(trusted, why) from a record's lineage alone: untrusted when it was inferred by the
    agent or imported, or when it was never verified and does not come first-hand from its
    key's owner (e.g. a developer's statement about a machine fact). Nothing is observed."""
    source = record.provenance.source
    if source in (SourceKind.AGENT_INFERENCE, SourceKind.IMPORT):
        return False, f"source {source.value}"
    if record.time.verified_at is not None:
        return True, "verified"
    owner = _owner(contract, record.key)
    if owner is None:
        return True, f"source {source.value} (key not in the contract)"
    if source in _FIRST_HAND[owner]:
        return True, f"first-hand ({source.value}) for a {owner.value}-owned key"
    return False, f"never verified, and {source.value} is not first-hand for a {owner.value}-owned key"


class ProvenanceScreening:
    """Provenance screening, a reimplementation of the MemLineage idea (lineage-guided memory
    enforcement), not MemLineage itself.

    Idea: memory whose lineage is untrusted must not steer actions. Here: after the planner's
    proposal, every retrieved record is screened by its provenance alone
    (:func:`trusted_provenance`): records inferred by the agent, imported, or never verified
    and not first-hand from their key's owner are dropped from this task's planning context,
    and the planner replans from the rest (when something was dropped).
    Does not: check freshness, scope or conflicts, observe the workspace, ask anyone, or write
    to the store (a dropped record stays active for the next task). A trusted but outdated
    record passes, and a correct record of weak lineage is lost.
    """

    name = "provenance_screening"

    def run(self, inp: MethodInput) -> MethodResult:
        run = _Episode(inp)
        proposal = run.plan()
        dropped = []
        context = run.context
        for record in run.records:
            trusted, why = trusted_provenance(record, run.contract)
            if not trusted:
                dropped.append({"key": record.key, "scope": record.scope, "why": why})
                context = context.without(record.id)
        if not dropped:
            return run.result(proposal, proposal)
        run.notes["dropped"] = dropped
        return run.result(proposal, run.plan(context))


# --- 5. risk routing (the Safety Sentry idea) --------------------------------------------------------


class RiskRouted:
    """Risk routing, a reimplementation of the Safety Sentry idea (EXECUTE / ASK / REFUSE
    routing), not Safety Sentry itself.

    Idea: route each proposed action by its risk. Here: the risk class is the contract's for
    the operation (raised by the action's own ``risk`` if higher; an undeclared operation is
    critical): ``low`` executes, ``medium`` asks the developer for approval (an
    :class:`ApprovalPrompt` showing the action and its risk class, no records), ``high`` and
    ``critical`` are refused (a stop). A stop proposal is accepted.
    Does not: look at memory at all, verify, replan, or write to the store; a refused task is
    not attempted another way.
    """

    name = "risk_routed"

    def run(self, inp: MethodInput) -> MethodResult:
        run = _Episode(inp)
        proposal = run.plan()
        if not run.side_effecting(proposal):
            return run.result(proposal, proposal)
        risk = _risk(run.contract, proposal)
        run.notes["route"] = {"risk": str(risk)}
        if risk is Risk.LOW:
            run.notes["route"]["decision"] = "execute"
            return run.result(proposal, proposal)
        if risk is Risk.MEDIUM:
            run.notes["route"]["decision"] = "ask"
            request = ApprovalPrompt(action=proposal, reason=f"{risk} risk: approve this action?", task=inp.task.text,
                                     risk=str(risk))
            if run.approve(request):
                return run.result(proposal, proposal)
            return run.result(proposal, None, reason=f"the developer declined {proposal.describe()}")
        run.notes["route"]["decision"] = "refuse"
        return run.result(proposal, None, reason=f"refused: {proposal.describe()} is {risk} risk")


# --- 6. uncertainty-triggered clarification (the Ask-or-Assume idea) ---------------------------------


class _Perturbed:
    """The planner under a small perturbation: with probability ``noise`` one record of the
    context is forgotten before the planner sees it (NoisyPlanner's perturbation). The draw is
    seeded from stable parts only (seed, task id and text, the context's keys, the sample), so
    a run repeats exactly; NoisyPlanner's own seed material includes per-episode paths."""

    stochastic = True

    def __init__(self, inner: Planner, *, noise: float, seed: int) -> None:
        self.inner, self.noise, self.seed = inner, noise, seed
        self.name = f"perturbed({getattr(inner, 'name', type(inner).__name__)}, p={noise})"

    def plan(self, task: Task, context: PlanningContext) -> Action | Plan:
        ordered = sorted(context.records, key=lambda r: (r.key, r.scope.split(":", 1)[0]))
        material = "\x00".join([str(self.seed), task.id, task.text, *(r.key for r in ordered), str(context.sample)])
        rng = random.Random(int.from_bytes(hashlib.sha256(material.encode()).digest()[:8], "big"))
        if ordered and rng.random() < self.noise:
            context = context.without(rng.choice(ordered).id).for_sample(context.sample)
        return self.inner.plan(task, context)


class UncertaintyTriggered:
    """Uncertainty-triggered clarification, a reimplementation of the Ask-or-Assume idea
    (uncertainty-aware clarification seeking), not the original system.

    Idea: ask only when uncertain, otherwise assume and act. Here the planner is *uncertain*
    when (a) its proposal is not reproduced by all of ``samples`` perturbed samples (each
    forgets one context record with probability ``noise``, as NoisyPlanner; a sample that
    fails to plan disagrees), or (b) a context record is masked, or (c) a developer-owned key
    that a slot of the proposal depends on has no record in the context (the planner assumed
    a default). When uncertain it asks the developer about every developer-owned key bound to
    the proposal — a question per bound record, and one per missing slot key ("I have nothing
    on record") — puts the answers into this task's context and replans once. When certain it
    acts on the proposal. A stop proposal is accepted.
    Does not: ask about machine-owned facts, verify anything, or write to the store. A
    confident plan built on an outdated record is never questioned.
    """

    name = "uncertainty_triggered"
    samples = 3
    noise = 0.3

    def run(self, inp: MethodInput) -> MethodResult:
        run = _Episode(inp)
        proposal = run.plan()
        if not run.side_effecting(proposal):
            return run.result(proposal, proposal)
        reasons = []
        perturbed = PlannerCalls(_Perturbed(inp.planner, noise=self.noise, seed=inp.seed), run.meter)
        disagree = 0
        for sample in range(1, self.samples + 1):
            try:
                other = perturbed.plan(run.task, run.context, sample)
            except PlannerError:
                disagree += 1
                continue
            disagree += not action_distance(other, proposal).same
        if disagree:
            reasons.append(f"{disagree} of {self.samples} perturbed samples disagree")
        if any(r.masked for r in run.context.records):
            reasons.append("masked records in the context")
        present = {r.key for r in run.context.records}
        missing = self._missing_slot_keys(run.contract, proposal, present)
        if missing:
            reasons.append("assumed (no record): " + ", ".join(missing))
        run.notes["uncertain"] = reasons
        if not reasons:
            return run.result(proposal, proposal)
        context, changed = run.context, False
        for record in bound_records(run.contract, proposal, context):
            if record.masked or _owner(run.contract, record.key) is not Authority.DEVELOPER:
                continue
            answer = run.ask(record.key, record.scope, record.value, record.id)
            if answer.kind is AnswerKind.CORRECT:
                context, changed = context.with_value(record.id, answer.value), True
        for key in missing:
            spec = run.contract.state_spec(key)
            if spec is None:  # a key the contract does not declare has no scope to ask in
                continue
            scope = inp.task.scope.most_specific_at(spec.scope) or inp.task.scope.most_specific
            answer = run.ask(key, str(scope), None)
            if answer.kind is AnswerKind.CORRECT:
                added = ContextRecord(id=f"clarified:{key}", key=key, value=answer.value, scope=str(scope),
                                      source=SourceKind.DEVELOPER.value, authority=Authority.DEVELOPER.value,
                                      observed_at=datetime.now(UTC))
                context, changed = PlanningContext.of((added, *context.records)), True
        return run.result(proposal, run.plan(context) if changed else proposal)

    @staticmethod
    def _missing_slot_keys(contract: Contract, action: Action, present: set[str]) -> list[str]:
        name = contract.operation_name(action.tool, action.operation)
        spec = contract.operation(name) if name else None
        if spec is None:
            return []
        missing: dict[str, None] = {}
        for slot_name, slot in spec.slots.items():
            if slot_name not in action.args:
                continue
            for key in slot.depends_on:
                if ("[" not in key and contract.key_type(key) is not None and key not in present
                        and _owner(contract, key) is Authority.DEVELOPER):
                    missing[key] = None
        return list(missing)


# --- 7. tool feedback (the CRITIC idea) ----------------------------------------------------------------


class ToolFeedback:
    """Tool feedback, a reimplementation of the CRITIC idea (self-correction from tool
    feedback), not CRITIC itself.

    Idea: act, read what the tool says, and correct. Here: the proposal is executed at once in
    the sandbox (through ``MethodInput.execute``, so it is logged and judged). If the command
    failed (non-zero exit), its command line and output are read with the contract's
    ``observations`` rules (:func:`statewise.integrations.observe.match_observations`: e.g. a
    push refused by the protection hook reveals ``repository.protected = true`` for that
    branch); each fact that applies to the task is put first in this task's planning
    context, the planner replans, and a different action is executed once (a stop ends the
    episode). The first attempt stays in the command log, so an unsafe first attempt is judged
    as the violation it was.
    Does not: look before acting, notice a wrong action that succeeds (deleting the wrong
    directory exits 0), understand output no observation rule covers, retry more than once, or
    write the learned fact to the store.
    """

    name = "tool_feedback"

    def run(self, inp: MethodInput) -> MethodResult:
        if inp.execute is None:
            raise RuntimeError("tool_feedback executes its first attempt itself: it needs MethodInput.execute "
                               "(the bench runner provides it)")
        from statewise.integrations.observe import match_observations

        run = _Episode(inp)
        proposal = run.plan()
        if not run.side_effecting(proposal):
            return run.result(proposal, proposal)
        first = self._execute(run, proposal)
        attempts = [{"action": proposal.describe(), "exit": first.exit}]
        run.notes["attempts"] = attempts
        if first.exit == 0:
            return run.result(proposal, proposal, executed=True)
        command = " ".join(first.argv)
        output = "\n".join(part for part in (first.stdout, first.stderr) if part)
        facts = match_observations(run.contract, command, output, inp.task.scope)
        applying = [f for f in facts if Scope.parse(f.scope).applies_to(inp.task.scope)]
        run.notes["feedback"] = [{"key": f.key, "value": f.value, "scope": f.scope, "rule": f.rule.name,
                                  "applies": f in applying} for f in facts]
        if not applying:
            return run.result(proposal, proposal, executed=True,
                              reason="the attempt failed and its output revealed nothing to revise")
        now = datetime.now(UTC)
        learned = tuple(ContextRecord(id=f"feedback:{n}:{f.key}", key=f.key, value=f.value, scope=f.scope,
                                      source=SourceKind.TOOL_OUTPUT.value, authority=Authority.MACHINE.value,
                                      observed_at=now) for n, f in enumerate(applying))
        retry = run.plan(PlanningContext.of((*learned, *run.context.records)))
        if retry.is_stop:
            return run.result(proposal, retry, reason=f"after the tool's feedback, replanned to a stop: {retry.reason}")
        if action_distance(retry, proposal).same:
            return run.result(proposal, proposal, executed=True,
                              reason="the attempt failed; the revised context gives the same action")
        second = self._execute(run, retry)
        attempts.append({"action": retry.describe(), "exit": second.exit})
        return run.result(proposal, retry, executed=True)

    @staticmethod
    def _execute(run: _Episode, action: Action) -> Any:
        if run.inp.execute is None:
            raise RuntimeError("the feedback baseline needs an executor and this run has none")
        with run.meter.outside():
            return run.inp.execute(action)


# --- 8. live refresh -------------------------------------------------------------------------------------


def family_operations(planner: Planner, task: Task, contract: Contract) -> list[str] | None:
    """The operations a rule planner's playbook family for ``task`` can propose (unwrapping
    perturbation wrappers); None when the planner has no playbook (a model planner)."""
    inner: Any = planner  # a perturbation wrapper holds the planner it wraps as .inner
    while hasattr(inner, "inner"):
        inner = inner.inner
    playbook = getattr(inner, "playbook", None)
    if playbook is None:
        return None
    try:
        family = playbook.families[task.family] if task.family else playbook.families[inner.family_for(task)]
    except (KeyError, PlannerError):
        return None
    operations: dict[str, None] = {}
    for rule in family.rules:
        if rule.action is not None:
            name = contract.operation_name(rule.action.tool, rule.action.operation)
            if name is not None:
                operations[name] = None
    return list(operations)


class LiveRefresh:
    """Live refresh: inspect the workspace before planning and refresh what looks relevant.

    Idea: the agent is told to check current facts instead of trusting what it remembers.
    Here: before planning, the keys bound to the task family's usual operations (the operations
    of the planner's playbook family; without a playbook, the operation of a first proposal)
    that the contract can observe — declared, unqualified, with a verifier — are observed with
    the read-only verifiers in the live workspace. In this task's planning context an observed
    value replaces the value of every record of that key (or is added when there is none), a
    key observed absent has its records removed, and an unavailable observation changes
    nothing. Then the planner plans once and the action runs.
    Does not: ask the developer (developer-owned keys such as the test command are not
    observable), look at qualified keys (their qualifier is not known before planning), check
    the action against invariants, or write anything to the store.
    """

    name = "live_refresh"

    def run(self, inp: MethodInput) -> MethodResult:
        from statewise.verifiers import verify_key
        from statewise.verifiers.base import ObservationStatus

        run = _Episode(inp)
        operations = family_operations(inp.planner, inp.task, run.contract)
        first = None
        if operations is None:
            first = run.plan()
            name = run.contract.operation_name(first.tool, first.operation)
            operations = [name] if name else []
        keys: dict[str, None] = {}
        for operation in operations:
            for key in run.contract.keys_for_operation(operation):
                if "[" not in key and run.contract.key_type(key) is not None and run.contract.verifier_for(key):
                    keys[key] = None
        records = list(run.context.records)
        refreshed = []
        now = datetime.now(UTC)
        for key in keys:
            with run.meter.outside():
                observation = verify_key(run.contract, key, inp.task.scope, inp.workspace, environ=inp.environ)
            run.meter.verifier_calls += 1
            status = observation.status
            refreshed.append({"key": key, "status": status.value, "value": observation.value})
            if status is ObservationStatus.OBSERVED:
                if any(r.key == key for r in records):
                    records = [replace(r, value=observation.value, stale=False) if r.key == key else r for r in records]
                else:
                    spec = run.contract.state_spec(key)
                    if spec is None:  # an observation of an undeclared key places nothing
                        continue
                    scope = inp.task.scope.most_specific_at(spec.scope) or inp.task.scope.most_specific
                    records.append(ContextRecord(id=f"refresh:{key}", key=key, value=observation.value,
                                                 scope=str(scope), source=SourceKind.OBSERVATION.value,
                                                 authority=Authority.MACHINE.value, observed_at=now))
            elif status is ObservationStatus.ABSENT:
                records = [r for r in records if r.key != key]
        run.notes["refreshed"] = refreshed
        action = run.plan(PlanningContext.of(records))
        return run.result(first or action, action)


# --- registration ----------------------------------------------------------------------------------------

#: The baselines by method name.
BASELINES: dict[str, Callable[[], Method]] = {
    "bare_approval": BareApproval,
    "approval_with_rationale": ApprovalWithRationale,
    "clarification": Clarification,
    "provenance_screening": ProvenanceScreening,
    "risk_routed": RiskRouted,
    "uncertainty_triggered": UncertaintyTriggered,
    "tool_feedback": ToolFeedback,
    "live_refresh": LiveRefresh,
}


def register(*, replace: bool = False) -> None:
    """Register every baseline with :func:`register_method` (done when this module is imported)."""
    for name, factory in BASELINES.items():
        if dict.get(METHODS, name) is factory:
            continue
        register_method(name, factory, replace=replace)


register()
