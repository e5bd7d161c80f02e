"""Stage 3, repair: write confirmed corrections back to the store, each one atomic.

A defective premise with corrective evidence becomes one supersession within the scope the
evidence established (the store narrows an over-general record instead of overwriting it);
a premise whose subject verifiably no longer exists is retracted with the observation as the
reason; a valid premise with fresh evidence only gets ``verified_at`` refreshed; a machine
fact the gate needed and the store did not have is learned as a new record.

``grounded=False`` is the no_typed_grounding ablation: the correction is written in the
record's own scope, wherever the evidence actually reached.

A record stored in a scope its evidence cannot reach at all (a per-user setting kept at a
repository's scope, say) is *relocated*: the evidence becomes the active record in its own
scope, and the mis-scoped record is retracted with a reason that names the new one (its
old value stays in the store as history). It would otherwise keep shadowing the correction.
"""

from __future__ import annotations

from statewise.errors import ConflictError, GroundingError, StateWiseError, StoreError, TransitionError
from statewise.pipeline.report import PremiseReport, PremiseStatus, RepairReport
from statewise.records import Evidence, LinkKind, Record, RecordDraft
from statewise.store.base import Store

__all__ = ["apply_repair", "learn"]


def apply_repair(
    store: Store, record: Record, premise: PremiseReport, *, grounded: bool = True
) -> tuple[RepairReport | None, PremiseReport]:
    """Write what ``premise`` established about ``record``. Returns the repair (None when
    nothing was written) and the premise, downgraded to unresolved if the write lost a race."""
    try:
        if premise.status is PremiseStatus.VALID:
            if premise.evidence is None or premise.route == "reliability":
                return None, premise
            evidence = premise.evidence
            if evidence.scope != record.scope:
                # Confirmation from a narrower or wider scope still confirms the value here.
                evidence = evidence.model_copy(update={"scope": record.scope})
            confirmed = store.confirm(record.id, evidence, expected_version=record.version)
            return RepairReport(kind="confirm", record_id=record.id, new_record_id=confirmed.id, key=record.key,
                                scope=record.scope, old_value=record.value, new_value=record.value), premise
        if premise.status is not PremiseStatus.DEFECTIVE:
            return None, premise
        if premise.absent or premise.evidence is None:
            retracted = store.retract(record.id, reason=f"observed absent: {premise.detail}", actor="statewise")
            return RepairReport(kind="retract", record_id=record.id, key=record.key, scope=retracted.scope,
                                old_value=record.value), premise
        evidence = premise.evidence if grounded else premise.evidence.model_copy(update={"scope": record.scope})
        try:
            result = store.supersede(record.id, evidence, expected_version=record.version,
                                     reason=evidence.detail[:500])
        except GroundingError:
            if evidence.key != record.key or evidence.value_type != record.value_type:
                raise
            return _relocate(store, record, evidence), premise
        kind = "narrow" if result.link.kind is LinkKind.NARROW else "supersede"
        return RepairReport(kind=kind, record_id=record.id, new_record_id=result.new.id, key=record.key,
                            scope=result.new.scope, old_value=record.value, new_value=result.new.value,
                            link_id=result.link.id), premise
    except (ConflictError, TransitionError) as error:
        downgraded = premise.model_copy(update={
            "status": PremiseStatus.UNRESOLVED,
            "missing": f"the record changed while it was being checked: {error}",
        })
        return None, downgraded
    except StoreError as error:
        downgraded = premise.model_copy(update={
            "status": PremiseStatus.UNRESOLVED, "missing": f"the store could not be written: {error}",
        })
        return None, downgraded


def _draft(evidence: Evidence) -> RecordDraft:
    """A new record holding what the evidence observed, confirmed when it was observed."""
    return RecordDraft(
        key=evidence.key, value=evidence.value, scope=evidence.scope, provenance=evidence.provenance(),
        value_type=evidence.value_type, observed_at=evidence.observed_at, verified_at=evidence.observed_at,
    )


def _relocate(store: Store, record: Record, evidence: Evidence) -> RepairReport:
    """Put the evidence in its own scope, then retract the record it could not reach. Two
    writes: if the retraction loses a race, the correction stays (it is confirmed evidence)
    and the caller reports the premise unresolved."""
    existing = store.get_active(evidence.key, evidence.scope)
    if existing is not None:
        placed = store.supersede(existing.id, evidence, expected_version=existing.version,
                                 reason=evidence.detail[:500]).new
    else:
        placed = store.put(_draft(evidence))
    store.retract(record.id, actor="statewise",
                  reason=f"mis-scoped: {evidence.key} was corrected in {evidence.scope} by {evidence.actor} "
                         f"(record {placed.id}); this record in {record.scope} would shadow it")
    return RepairReport(kind="relocate", record_id=record.id, new_record_id=placed.id, key=record.key,
                        scope=placed.scope, old_value=record.value, new_value=placed.value)


def learn(store: Store, premise: PremiseReport) -> RepairReport | None:
    """Store a fact the gate observed for a key that had no record (machine evidence only)."""
    evidence = premise.evidence
    if premise.status is not PremiseStatus.VALID or evidence is None:
        return None
    if store.get_active(evidence.key, evidence.scope) is not None:
        return None
    try:
        created = store.put(_draft(evidence))
    except StateWiseError:
        return None  # learning is a convenience; the check itself does not depend on it
    return RepairReport(kind="learn", record_id=None, new_record_id=created.id, key=created.key,
                        scope=created.scope, new_value=created.value)
