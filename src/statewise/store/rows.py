"""Store rows as plain data: what a reader needs of a record, without a pydantic model per row.

A :class:`RecordRow` is one ``sw_records`` row decoded into plain Python values (strings for
the enumerations, aware datetimes, the JSON value), in an immutable named tuple. Reading and
rendering need nothing more, and neither this module nor building a row imports pydantic:
``statewise record list`` reads and prints rows, and the store's ``retrieve_rows`` and
``get_row`` return them. :meth:`RecordRow.to_record` turns a row into the validated
:class:`~statewise.records.Record` exactly as ``get`` returns it (the store's ``get`` and
``retrieve`` build their records through it), importing the models on first use.
"""

# No `from __future__ import annotations`: the named tuples below get real types, because
# types given as text are compiled when the class is made, and a process's first compile()
# sets up Python's AST types, about a quarter of `python -c pass` (docs/performance-cli.md).
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from statewise.records import Provenance, Record, Retrieval

__all__ = ["RecordRow", "RetrievalRows", "record_from_values", "row_from_values", "shared_provenance"]


class RecordRow(NamedTuple):
    """One stored record as plain values, field for field what :class:`Record` holds (its
    ``time`` and ``provenance`` flattened; ``value_type``, ``status``, ``source`` and
    ``authority`` as their enumerations' string values).

    A named tuple rather than a frozen dataclass: as immutable; made at a third of the cost
    when the module is imported (a frozen dataclass compiles six methods), which ``statewise
    record list`` pays on every run (docs/performance-cli.md); and built per row in one C call
    where a dataclass's 19 slots took 19 (about 9x the cost per row, docs/performance.md)."""

    id: str
    key: str
    scope: str
    value_type: str
    value: Any
    status: str
    observed_at: datetime
    recorded_at: datetime
    verified_at: datetime | None
    ttl_seconds: int | None
    source: str
    authority: str
    actor: str
    reference: str | None
    supersedes: str | None
    superseded_by: str | None
    version: int
    status_reason: str | None
    status_changed_at: datetime | None

    @property
    def confirmed_at(self) -> datetime:
        """The latest time the value was known to hold (``RecordTime.confirmed_at``)."""
        verified = self.verified_at
        return verified if verified is not None and verified > self.observed_at else self.observed_at

    def is_stale(self, now: datetime) -> bool:
        """Past its TTL at ``now`` (``RecordTime.is_stale``)."""
        ttl = self.ttl_seconds
        return ttl is not None and now - self.confirmed_at > timedelta(seconds=ttl)

    @classmethod
    def from_record(cls, record: "Record") -> "RecordRow":
        """The row a record is stored as (for code that holds a Record and renders rows)."""
        time, provenance = record.time, record.provenance
        return cls(
            record.id, record.key, record.scope, record.value_type.value, record.value, record.status.value,
            time.observed_at, time.recorded_at, time.verified_at, time.ttl_seconds, provenance.source.value,
            provenance.authority.value, provenance.actor, provenance.reference, record.supersedes,
            record.superseded_by, record.version, record.status_reason, record.status_changed_at,
        )

    def to_record(self) -> "Record":
        """The validated model of this row, exactly as the store's ``get`` returns it."""
        return record_from_values((
            self.id, self.key, self.scope, self.value_type, self.value, self.status, self.observed_at,
            self.recorded_at, self.verified_at, self.ttl_seconds, self.source, self.authority, self.actor,
            self.reference, self.supersedes, self.superseded_by, self.version, self.status_reason,
            self.status_changed_at,
        ))


def record_from_values(values: tuple[Any, ...]) -> "Record":
    """The Record of a row's decoded values, in :class:`RecordRow`'s field order (the store's
    column order): the one conversion from a stored row to the model.

    Rows were validated when written, so the models are built without re-validating them
    (what ``model_construct`` builds when given every field): this keeps ``get`` and
    ``retrieve`` within a small factor of a raw query. The attribute stores are written out:
    this runs once per row read."""
    (rid, key, scope, value_type, value, status, observed_at, recorded_at, verified_at, ttl, source, authority,
     actor, reference, supersedes, superseded_by, version, status_reason, status_changed_at) = values
    models = _MODELS[0] if _MODELS else _models()
    setattr_, new = _object_setattr, _object_new
    time = new(models.RecordTime)
    setattr_(time, "__dict__", {
        "observed_at": observed_at, "recorded_at": recorded_at, "verified_at": verified_at, "ttl_seconds": ttl,
    })
    setattr_(time, "__pydantic_fields_set__", models.time_fields)
    setattr_(time, "__pydantic_extra__", None)
    setattr_(time, "__pydantic_private__", None)
    record = new(models.Record)
    setattr_(record, "__dict__", {
        "id": rid,
        "key": key,
        "value": value,
        "value_type": models.value_types[value_type],
        "scope": scope,
        "status": models.statuses[status],
        "time": time,
        "provenance": models.provenance(source, authority, actor, reference),
        "supersedes": supersedes,
        "superseded_by": superseded_by,
        "version": version,
        "status_reason": status_reason,
        "status_changed_at": status_changed_at,
    })
    setattr_(record, "__pydantic_fields_set__", models.record_fields)
    setattr_(record, "__pydantic_extra__", None)
    setattr_(record, "__pydantic_private__", None)
    return record


_object_setattr = object.__setattr__
_object_new = object.__new__


def row_from_values(values: tuple[Any, ...]) -> RecordRow:
    """``RecordRow(*values)`` in one call (this runs once per row read); a TypeError when the
    number of values is not the number of fields."""
    return RecordRow._make(values)


class RetrievalRows(NamedTuple):
    """:class:`~statewise.records.Retrieval` as rows: the records that apply to a task, and
    those held back (stale, shadowed by a more specific scope, near misses)."""

    task: str
    records: tuple[RecordRow, ...]
    stale: tuple[RecordRow, ...] = ()
    shadowed: tuple[RecordRow, ...] = ()
    near_misses: tuple[RecordRow, ...] = ()

    @property
    def held_back(self) -> dict[str, int]:
        return {"stale": len(self.stale), "shadowed": len(self.shadowed), "near_misses": len(self.near_misses)}

    @classmethod
    def from_retrieval(cls, result: "Retrieval") -> "RetrievalRows":
        """The rows of a retrieval (for a backend that builds Records itself)."""
        rows = RecordRow.from_record
        return cls(result.task, tuple(map(rows, result.records)), tuple(map(rows, result.stale)),
                   tuple(map(rows, result.shadowed)), tuple(map(rows, result.near_misses)))

    def to_retrieval(self) -> "Retrieval":
        """The validated model, as the store's ``retrieve`` returns it."""
        from statewise.records import Retrieval

        # The rows were validated when written; skip re-validating them.
        return Retrieval.model_construct(
            task=self.task, records=[row.to_record() for row in self.records],
            stale=[row.to_record() for row in self.stale], shadowed=[row.to_record() for row in self.shadowed],
            near_misses=[row.to_record() for row in self.near_misses],
        )


class _Models:
    """The model classes and lookups :meth:`RecordRow.to_record` needs, made on first use (so
    that reading rows never imports pydantic)."""

    def __init__(self) -> None:
        from statewise.records import Authority, Provenance, Record, RecordStatus, RecordTime, SourceKind
        from statewise.values import ValueType

        self.Record, self.RecordTime, self.Provenance = Record, RecordTime, Provenance
        # The fields-set of every record and time built from a row: all fields. One set is
        # shared by all of them (a set per row was measurable); pydantic copies it before it
        # ever changes one (model_copy), and the models are frozen.
        self.time_fields = set(RecordTime.model_fields)
        self.record_fields = set(Record.model_fields)
        self.provenance_fields = set(Provenance.model_fields)
        self.value_types = {member.value: member for member in ValueType}
        self.statuses = {member.value: member for member in RecordStatus}
        self.sources = {member.value: member for member in SourceKind}
        self.authorities = {member.value: member for member in Authority}
        self._provenances: dict[tuple[str, str, str, str | None], Provenance] = {}

    def provenance(self, source: str, authority: str, actor: str, reference: str | None) -> "Provenance":
        # Provenance is immutable and a store holds few distinct ones (one per actor and
        # source), so rows share instances instead of building one each.
        key = (source, authority, actor, reference)
        cache = self._provenances
        found = cache.get(key)
        if found is None:
            if len(cache) >= 4096:
                cache.clear()
            found = object.__new__(self.Provenance)
            object.__setattr__(found, "__dict__", {
                "source": self.sources[source], "authority": self.authorities[authority], "actor": actor,
                "reference": reference,
            })
            object.__setattr__(found, "__pydantic_fields_set__", self.provenance_fields)
            object.__setattr__(found, "__pydantic_extra__", None)
            object.__setattr__(found, "__pydantic_private__", None)
            cache[key] = found
        return found


_MODELS: list[_Models] = []


def _models() -> _Models:
    if not _MODELS:
        _MODELS.append(_Models())
    return _MODELS[0]


def shared_provenance(source: str, authority: str, actor: str, reference: str | None) -> "Provenance":
    """The Provenance model of these values, one instance shared by every row that has them."""
    return _models().provenance(source, authority, actor, reference)
