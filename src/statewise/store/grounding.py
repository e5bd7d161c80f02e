"""Where a correction is grounded: the evidence a superseded record carries, and the scope that
evidence establishes (a correction never reaches further than the task it was observed in).
"""

from __future__ import annotations

from statewise.errors import GroundingError
from statewise.records import Evidence, Record
from statewise.scopes import Scope, ScopeLevel

__all__ = ["evidence_of", "grounded_scope"]


def evidence_of(record: Record) -> Evidence:
    """The evidence a plain ``put(replace=True)`` carries: the new record's own provenance."""
    return Evidence(
        key=record.key, value=record.value, value_type=record.value_type, scope=record.scope,
        source=record.provenance.source, authority=record.provenance.authority,
        actor=record.provenance.actor, observed_at=record.time.observed_at,
        detail="stated when the record was replaced", reference=record.provenance.reference,
    )


def grounded_scope(record: Record, evidence: Evidence) -> str:
    """Typed evidence grounding: the scope a correction may be written in, or GroundingError."""
    if evidence.key != record.key:
        raise GroundingError(record.id, f"evidence is about {evidence.key}, the record is {record.key}")
    if evidence.value_type is not record.value_type:
        raise GroundingError(
            record.id, f"evidence is a {evidence.value_type.value}, the record a {record.value_type.value}"
        )
    record_scope, evidence_scope = record.scope_obj, Scope.parse(evidence.scope)
    if evidence_scope.contains(record_scope):
        return record.scope
    if record_scope.contains(evidence_scope) or _reaches(record_scope, evidence_scope):
        return evidence.scope
    raise GroundingError(
        record.id, f"evidence from {evidence.scope} does not reach the record's scope {record.scope}"
    )


def _reaches(general: Scope, narrow: Scope) -> bool:
    """Scopes of different kinds nest by meaning, not syntax: a global or user record can be
    narrowed to any workspace or repository, and a workspace record to a repository (the
    caller established that the repository is checked out there)."""
    if general.level is ScopeLevel.GLOBAL or general.level is ScopeLevel.USER:
        return narrow.level > general.level
    if general.level is ScopeLevel.WORKSPACE:
        return narrow.level in (ScopeLevel.REPO, ScopeLevel.BRANCH)
    return False
