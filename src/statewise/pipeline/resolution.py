"""Stage 2, resolution: is each premise still valid, from the right authority?

Cheapest evidence first:

1. reliability checks on what is already known: the declared type, whether the scope
   applies and is not broader than the key's level, whether the source has the key's
   authority, freshness against the key's TTL, and newer conflicting records. A premise that
   passes all of them — confirmed by its authority within its TTL — is valid without a call;
2. a read-only verifier for a machine-observable fact (observed in the live workspace);
3. one targeted clarification question for developer-owned intent, naming the key, the scope
   and the value in doubt.

Evidence is bound to the premise's key, type and scope (typed evidence grounding): its scope
is the task's own scope at the key's declared level, so a correction reaches exactly as far
as the observation or the answer does. Every premise ends valid, defective (with corrective
evidence) or unresolved (with what is missing); a verifier that cannot decide leaves it
unresolved, it never guesses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.contract import Contract, StateSpec
from statewise.errors import ValueTypeError
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.report import PremiseReport, PremiseStatus
from statewise.records import Authority, Evidence, Record, SourceKind
from statewise.scopes import ScopeLevel, TaskScope
from statewise.values import check_value, same_value
from statewise.verifiers import verify_key
from statewise.verifiers.base import ObservationStatus

if TYPE_CHECKING:  # only the type: a hook call has no channel (see statewise.pipeline.guard)
    from statewise.clarify import ClarificationChannel

__all__ = ["Resolver", "established_scope", "observed_elsewhere", "reliability_findings"]

# Sources that count as the key's own authority speaking, per authority.
_AUTHORITATIVE_SOURCES = {
    Authority.MACHINE: {SourceKind.OBSERVATION, SourceKind.TOOL_OUTPUT},
    Authority.DEVELOPER: {SourceKind.DEVELOPER},
    Authority.AGENT: {SourceKind.AGENT_INFERENCE, SourceKind.OBSERVATION, SourceKind.TOOL_OUTPUT},
}


def established_scope(task: TaskScope, spec: StateSpec, record: Record | None) -> str:
    """The scope that evidence gathered in this task establishes for a key of ``spec``:
    the task's own scope at the key's declared level (or the record's scope when the task
    does not determine that level)."""
    own = task.most_specific_at(spec.scope)
    if own is None:
        if record is not None:
            return record.scope
        return str(task.most_specific)
    return str(own)


def observed_elsewhere(record: Record, task: TaskScope, contract: Contract) -> bool:
    """Whether ``record`` is a machine fact observed in another workspace than the task's own.

    A machine fact kept at the workspace level is an observation of that one directory (its
    realpath, a path relative to it, the venv found from it): one made at the repository root
    says nothing about a subdirectory, though the root's workspace scope contains it. Inherited,
    it made `workspace.root` the root's in `migrations/`, and `rm 0001.sql` there was checked as
    `rm <root>/0001.sql` and passed (issue 25). Developer-owned keys do inherit."""
    spec = contract.state_spec(record.key)
    if spec is None or spec.authority is not Authority.MACHINE or task.workspace is None:
        return False
    scope = record.scope_obj
    return scope.level is ScopeLevel.WORKSPACE and scope.name != task.workspace


def reliability_findings(
    record: Record, spec: StateSpec, task: TaskScope, others: Sequence[Record], now: datetime
) -> list[str]:
    """What makes a premise's current validity unsettled; empty when it is settled."""
    findings: list[str] = []
    try:
        check_value(record.value, spec.value_type, choices=spec.choices, key=record.key)
    except ValueTypeError as error:
        findings.append(f"type: {error}")
    scope = record.scope_obj
    if not scope.applies_to(task):
        findings.append(f"scope: {record.scope} does not apply to this task")
    elif scope.level < spec.scope:
        findings.append(f"scope: {record.scope} is broader than the key's level ({spec.scope.label})")
    elif spec.scope is ScopeLevel.USER and scope.level is not ScopeLevel.USER:
        # A per-user setting kept for a whole workspace or repository speaks for every user of it.
        findings.append(f"scope: {record.key} is set per user; {record.scope} would apply it to everyone there")
    elif (spec.authority is Authority.MACHINE and scope.level is ScopeLevel.WORKSPACE
          and task.workspace is not None and scope.name != task.workspace):
        # See observed_elsewhere: the guard drops such records before resolution; a caller
        # that resolves one anyway gets it observed again.
        findings.append(f"scope: observed in {scope.name}, not in this task's directory {task.workspace}")
    if (spec.authority is Authority.DEVELOPER and scope.level is ScopeLevel.USER
            and record.time.verified_at is None and record.provenance.actor not in (scope.name, "")):
        # Developer authority is personal: a teammate's word is not the user's own setting.
        findings.append(f"authority: {record.provenance.actor} stated {scope.name}'s own setting")
    if record.provenance.authority is not spec.authority:
        findings.append(
            f"authority: stated by {record.provenance.authority.value} ({record.provenance.actor}); "
            f"the key belongs to the {spec.authority.value}"
        )
    confirmed = record.time.verified_at is not None or (
        record.provenance.authority is spec.authority
        and record.provenance.source in _AUTHORITATIVE_SOURCES[spec.authority]
    )
    if not confirmed:
        findings.append(f"provenance: never confirmed by its authority (source {record.provenance.source.value})")
    if record.time.is_stale(now):
        findings.append(f"freshness: last confirmed {record.time.confirmed_at:%Y-%m-%d %H:%M}, TTL {spec.ttl_seconds}s")
    # Conflicts exist only where the key holds one value per scope (single_valued, the
    # default); a key declared single_valued: false may hold several, none contradicting.
    for other in others if spec.single_valued else ():
        if other.id != record.id and other.key == record.key and other.value != record.value:
            if other.time.observed_at > record.time.observed_at:
                findings.append(f"conflict: newer record {other.id} in {other.scope} says {other.value!r}")
    return findings


@dataclass
class Resolver:
    """Resolves premises for one task. Verifier and clarification calls are counted in ``meter``."""

    contract: Contract
    task: TaskScope
    workspace: Path | None
    meter: CostMeter
    clarifier: ClarificationChannel | None = None
    environ: Mapping[str, str] | None = None
    #: Accept a premise on reliability checks alone. False always asks the authority.
    use_reliability: bool = True

    def resolve(self, record: Record, others: Sequence[Record] = (), *, observe: bool = False) -> PremiseReport:
        """Settle one premise. ``observe``: a machine-observable fact is observed even when the
        reliability checks pass (the guard asks for it before riskier actions); when the
        verifier cannot decide, the reliability checks still settle it."""
        spec = self.contract.state_spec(record.key)
        base = dict(record_id=record.id, key=record.key, scope=record.scope, value=record.value)
        if spec is None or self.contract.key_type(record.key) is None:
            return PremiseReport(**base, status=PremiseStatus.UNRESOLVED, route="none",
                                 missing=f"the {self.contract.name} contract does not declare {record.key}")
        findings = reliability_findings(record, spec, self.task, others, datetime.now(UTC))
        reliable = not findings and self.use_reliability
        observable = spec.authority is Authority.MACHINE and self.contract.verifier_for(record.key) is not None
        if reliable and not (observe and observable):
            return PremiseReport(**base, status=PremiseStatus.VALID, route="reliability", findings=[],
                                 detail="confirmed by its authority within its TTL, no conflicts")
        outcome = self._ask_authority(record.key, spec, record)
        if reliable and outcome.status is PremiseStatus.UNRESOLVED:
            return PremiseReport(**base, status=PremiseStatus.VALID, route="reliability", findings=[],
                                 detail=f"confirmed by its authority within its TTL, no conflicts; the verifier "
                                        f"could not observe it now ({outcome.missing})")
        return outcome.model_copy(update={**base, "findings": findings})

    def resolve_missing(self, key: str, *, ask_developer: bool = False, because: str = "") -> PremiseReport:
        """A state key the gate needs but the store has no applicable record for.

        Machine facts are observed; a developer-owned value is asked for only when
        ``ask_developer`` (the gate asks only when an applicable invariant needs it);
        ``because`` says why, in the question (the rule that needs it)."""
        spec = self.contract.state_spec(key)
        if spec is None or self.contract.key_type(key) is None:
            return PremiseReport(record_id=None, key=key, scope=None, value=None, status=PremiseStatus.UNRESOLVED,
                                 route="none", missing=f"the {self.contract.name} contract does not declare {key}")
        outcome = self._ask_authority(key, spec, None, ask_developer=ask_developer, because=because)
        return outcome.model_copy(update={"findings": ["no record in the store"]})

    # --- routes -----------------------------------------------------------------------

    def _ask_authority(self, key: str, spec: StateSpec, record: Record | None, *, ask_developer: bool = True,
                       because: str = "") -> PremiseReport:
        scope = established_scope(self.task, spec, record)
        # The fields every report of this premise shares, whatever the route.
        common: dict[str, Any] = dict(record_id=record.id if record else None, key=key, scope=scope,
                                      value=record.value if record else None)
        if spec.authority is Authority.DEVELOPER:
            if not ask_developer:
                return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="none",
                                     missing=f"{key} is the developer's to state; nobody has stated it for {scope}")
            return self._clarify(key, spec, record, scope, common, because=because)
        if self.contract.verifier_for(key) is None:
            return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="none",
                                 missing=f"no verifier is bound to {key}, and it is not the developer's to state")
        return self._verify(key, spec, record, scope, common)

    def _verify(self, key: str, spec: StateSpec, record: Record | None, scope: str,
                common: dict[str, Any]) -> PremiseReport:
        if self.workspace is None:
            return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="verifier",
                                 missing="no workspace to observe")
        task = self.task
        record_scope = record.scope_obj if record else None
        if record_scope is not None and record_scope.level is ScopeLevel.BRANCH:
            task = TaskScope(task.user, task.workspace, record_scope.name, record_scope.branch)
        with self.meter.outside():
            observation = verify_key(self.contract, key, task, self.workspace, environ=self.environ)
        self.meter.verifier_calls += 1
        binding = self.contract.verifier_for(key)
        actor = binding.adapter if binding is not None else "verifier"
        if observation.status is ObservationStatus.UNAVAILABLE:
            return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="verifier",
                                 missing=f"{actor} could not observe {key}: {observation.detail}",
                                 detail=observation.detail)
        if observation.status is ObservationStatus.ABSENT:
            # A record of something that is not there is wrong; with no record, the verifier
            # has settled the question: the thing is absent (an invariant sees no value).
            status = PremiseStatus.DEFECTIVE if record is not None else PremiseStatus.VALID
            return PremiseReport(**common, status=status, route="verifier", absent=True,
                                 detail=observation.detail)
        evidence = Evidence(
            key=key, value=observation.value, value_type=spec.value_type, scope=scope,
            source=SourceKind.OBSERVATION, authority=Authority.MACHINE, actor=actor,
            observed_at=datetime.now(UTC), detail=observation.detail, reference=observation.reference,
        )
        if record is None:
            return PremiseReport(**common, status=PremiseStatus.VALID, route="verifier", evidence=evidence,
                                 detail=observation.detail).model_copy(update={"value": observation.value})
        same = same_value(observation.value, record.value, spec.value_type)
        status = PremiseStatus.VALID if same else PremiseStatus.DEFECTIVE
        return PremiseReport(**common, status=status, route="verifier", evidence=evidence, detail=observation.detail)

    def _clarify(self, key: str, spec: StateSpec, record: Record | None, scope: str, common: dict[str, Any],
                 because: str = "") -> PremiseReport:
        if record is None:
            about = f" ({spec.description.strip().rstrip('.')})" if spec.description else ""
            why = f": {' '.join(because.split())}" if because else "."
            text = f"What is {key}{about} for {scope}? Nothing is on record, and this action needs it{why}"
        else:
            text = self.contract.question_for(key, scope=scope, value=record.value)
        in_doubt = record.value if record is not None else None
        if self.clarifier is None:
            return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="clarification", question=text,
                                 missing=f"needs the developer: {text}")
        from statewise.clarify import AnswerKind, Question  # here: a hook call has no clarifier

        question = Question(key=key, scope=scope, value=in_doubt, value_type=spec.value_type, text=text,
                            record_id=record.id if record is not None else None, choices=spec.choices)
        self.meter.clarification_questions += 1
        with self.meter.outside():
            answer = self.clarifier.ask(question)
        if answer.kind is AnswerKind.UNKNOWN:
            return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="clarification", question=text,
                                 missing=f"the developer did not settle it: {answer.note or 'no answer'}")
        value = in_doubt if answer.kind is AnswerKind.CONFIRM else answer.value
        try:
            check_value(value, spec.value_type, choices=spec.choices, key=key)
        except ValueTypeError as error:
            return PremiseReport(**common, status=PremiseStatus.UNRESOLVED, route="clarification", question=text,
                                 missing=f"the answer does not fit the key's type: {error}")
        evidence = Evidence(
            key=key, value=value, value_type=spec.value_type, scope=scope, source=SourceKind.DEVELOPER,
            authority=Authority.DEVELOPER, actor=answer.by, observed_at=datetime.now(UTC),
            detail=f"answered: {text}",
        )
        if record is None:
            return PremiseReport(**{**common, "value": value}, status=PremiseStatus.VALID, route="clarification",
                                 question=text, evidence=evidence)
        status = PremiseStatus.VALID if same_value(value, record.value, spec.value_type) else PremiseStatus.DEFECTIVE
        return PremiseReport(**common, status=status, route="clarification", question=text, evidence=evidence)


def resolved_value(report: PremiseReport) -> Any:
    """The value the premise resolves to (the evidence's when there is evidence)."""
    if report.evidence is not None:
        return report.evidence.value
    return report.value
