"""Stage 3, repair: write confirmed corrections back to the store, each one atomic.

A defective premise with corrective evidence becomes one supersession within the scope the
evidence established (the store narrows an over-general record instead of overwriting it);
a premise whose subject verifiably no longer exists is retracted with the observation as the
reason; a valid premise with fresh evidence only gets ``verified_at`` refreshed; a machine
fact the gate needed and the store did not have is learned as a new record.

``grounded=False`` is the no_typed_grounding ablation: the correction is written in the
record's own scope, wherever the evidence actually reached.
"""

from __future__ import annotations

from statewise.errors import ConflictError, StateWiseError, StoreError, TransitionError
from statewise.pipeline.report import PremiseReport, PremiseStatus, RepairReport
from statewise.records import LinkKind, Record, RecordDraft
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
        result = store.supersede(record.id, evidence, expected_version=record.version,
                                 reason=evidence.detail[:500])
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


def learn(store: Store, premise: PremiseReport) -> RepairReport | None:
    """Store a fact the gate observed for a key that had no record (machine evidence only)."""
    evidence = premise.evidence
    if premise.status is not PremiseStatus.VALID or evidence is None:
        return None
    if store.get_active(evidence.key, evidence.scope) is not None:
        return None
    try:
        created = store.put(RecordDraft(
            key=evidence.key, value=evidence.value, scope=evidence.scope, provenance=evidence.provenance(),
            value_type=evidence.value_type, observed_at=evidence.observed_at, verified_at=evidence.observed_at,
        ))
    except StateWiseError:
        return None  # learning is a convenience; the check itself does not depend on it
    return RepairReport(kind="learn", record_id=None, new_record_id=created.id, key=created.key,
                        scope=created.scope, new_value=created.value)
