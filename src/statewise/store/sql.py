"""The store logic shared by the SQL backends; each backend supplies a connection and dialect.

Writes follow one pattern: inside a single transaction, first change the old record's status
with an optimistic ``WHERE version = ?`` guard, then insert the new record, then the link. A
partial unique index on (key, scope) for active records makes "at most one active record"
a property of the database, not only of this code.
"""

from __future__ import annotations

import functools
import json
import operator
import os
import sys
import warnings
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from statewise.errors import (
    ActiveRecordExistsError,
    GroundingError,
    ImportFormatError,
    KeyNameError,
    RecordNotFoundError,
    StaleVersionError,
    StoreCorruptError,
    StoreUnavailableError,
    TransitionError,
    ValueTypeError,
)
from statewise.scopes import Scope, TaskScope
from statewise.store.base import Store
from statewise.store.columns import ACTIVE, INSERT_LINK, INSERT_RECORD, LINK_COLUMNS, RECORD_COLUMNS
from statewise.store.correction import fast_id as _new_id
from statewise.store.correction import mark_in_scope, write_in_scope
from statewise.store.correction import trusted as _trusted
from statewise.store.filters import key_matcher
from statewise.store.rows import RecordRow, RetrievalRows, record_from_values
from statewise.values import ValueType, check_value, same_value

# Annotations only. The models (pydantic) are imported by the methods that build them, so a
# reader of rows never imports them; the bulk module builds its validators when imported, and
# only an import needs it.
if TYPE_CHECKING:

    from statewise.records import (
        Evidence,
        Lineage,
        Link,
        Record,
        RecordDraft,
        RecordStatus,
        Retrieval,
        Supersession,
    )
    from statewise.store.bulk import ImportBatch, LineEncoder, Progress

__all__ = ["SQLStore", "checkpoint"]

_ACTIVE = ACTIVE  # RecordStatus.ACTIVE (the models are imported by the writes only)
_INSERT_RECORD = INSERT_RECORD
_INSERT_LINK = INSERT_LINK
_new_row = tuple.__new__


#: What a retrieval decodes each row into: a Record or a RecordRow.
_R = TypeVar("_R")

#: A retrieval row's sort key: its record's key, then its scope's rank (see _retrieve_statement).
_KEY_THEN_RANK = operator.itemgetter(3, 1)


def checkpoint(name: str) -> None:
    """A named point inside a write transaction. It does nothing; the crash-safety test
    replaces it in a child process to stop there and be killed mid-write."""


@functools.lru_cache(maxsize=4096)
def _canonical_scope(scope: str) -> str:
    """``str(Scope.parse(scope))``, remembered: lookups repeat the same few scopes, and a bad
    one raises ScopeError every time (an exception is not cached)."""
    return str(Scope.parse(scope))


def _prefix_upper_bound(prefix: str) -> str:
    """The smallest string greater than every string that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class SQLStore(Store):
    """Store logic over a DB-API connection. Subclasses implement the hooks at the bottom
    and call ``super().__init__()`` first."""

    def __init__(self) -> None:
        # The point reads' statements, in the driver's placeholder style, made once.
        self._select_by_id = self._sql(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE id = ?")
        self._select_active = self._sql(
            f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = '{_ACTIVE}'"
        )

    # --- hooks for backends -----------------------------------------------------------

    @abstractmethod
    @contextmanager
    def _write(self) -> Iterator[Any]:
        """A cursor inside a write transaction that commits on success, rolls back on error."""

    @abstractmethod
    @contextmanager
    def _read(self) -> Iterator[Any]:
        """A cursor for reads that see one consistent state."""

    @abstractmethod
    def _sql(self, statement: str) -> str:
        """Translate ``?`` placeholders to the driver's style."""

    @abstractmethod
    def _encode_time(self, value: datetime | None) -> Any: ...

    @abstractmethod
    def _decode_time(self, value: Any) -> datetime | None: ...

    def _decode_present_time(self, value: Any) -> datetime:
        """``_decode_time`` of a value known not to be None (a backend may make it faster)."""
        return self._decode_time(value)  # type: ignore[return-value]

    @abstractmethod
    def _encode_json(self, value: Any) -> Any: ...

    @abstractmethod
    def _decode_json(self, value: Any) -> Any: ...

    @abstractmethod
    def _is_unique_violation(self, error: BaseException) -> bool: ...

    #: Appended to the SELECT that reads a record before changing it (row lock where needed).
    _lock_suffix = ""

    def _statement_guard(self) -> Any:
        """A context in which one failing statement does not abort the whole transaction."""
        return nullcontext()

    # --- integrity on open -------------------------------------------------------------

    #: The partial unique index that makes "one active record per (key, scope)" hold.
    ONE_ACTIVE_INDEX = "sw_records_one_active"
    _ONE_ACTIVE_SQL = "CREATE UNIQUE INDEX sw_records_one_active ON sw_records (key, scope) WHERE status = 'active'"

    def _one_active_index_definition(self) -> str | None:
        """The SQL that defines the one-active index as the database holds it, or None."""
        raise NotImplementedError

    def one_active_index_ok(self) -> bool:
        """True when the database still enforces one active record per (key, scope): the
        index exists, is unique, is on (key, scope) and covers only active records."""
        definition = self._one_active_index_definition()
        if definition is None:
            return False
        flat = "".join(definition.lower().replace('"', "").split())
        return flat.startswith("createuniqueindex") and "(key,scope)" in flat and "status='active'" in flat

    def duplicate_active(self, limit: int | None = None) -> list[tuple[str, str, list[str]]]:
        """Every (key, scope) with more than one active record, with those records' ids."""
        with self._read() as cur:
            cur.execute(self._sql(
                f"SELECT key, scope, id FROM sw_records WHERE status = '{_ACTIVE}' AND (key, scope) IN ("
                f"SELECT key, scope FROM sw_records WHERE status = '{_ACTIVE}' GROUP BY key, scope "
                "HAVING COUNT(*) > 1) ORDER BY key, scope, seq"
            ))
            rows = cur.fetchall()
        found: dict[tuple[str, str], list[str]] = {}
        for key, scope, rid in rows:
            found.setdefault((key, scope), []).append(rid)
        groups = [(key, scope, ids) for (key, scope), ids in found.items()]
        return groups if limit is None else groups[:limit]

    def _check_integrity_on_open(self) -> None:
        """Refuse a store whose one-active guarantee was tampered with.

        A missing or altered index with two active records for one (key, scope) raises
        StoreCorruptError naming them; with no duplicates the index is put back (a warning
        says so), which restores the guarantee without touching any record.
        """
        if self.one_active_index_ok():
            return
        duplicates = self.duplicate_active(limit=4)
        if duplicates:
            shown = "; ".join(f"{key} in {scope} ({', '.join(ids)})" for key, scope, ids in duplicates)
            raise StoreCorruptError(
                self.location,
                f"more than one active record for one key and scope: {shown}. The index "
                f"{self.ONE_ACTIVE_INDEX} that forbids this is missing or altered, so the store was "
                "changed outside StateWise; `statewise store check` lists every problem",
            )
        with self._write() as cur:
            cur.execute(self._sql(f"DROP INDEX IF EXISTS {self.ONE_ACTIVE_INDEX}"))
            cur.execute(self._sql(self._ONE_ACTIVE_SQL))
        warnings.warn(
            f"store {self.location}: the index {self.ONE_ACTIVE_INDEX} was missing or altered; "
            "no key and scope had two active records, so it was recreated",
            stacklevel=3,
        )

    # --- row mapping ------------------------------------------------------------------

    def _decoded(self, row: Sequence[Any]) -> tuple[Any, ...]:
        """A ``RECORD_COLUMNS`` row with its times and JSON value decoded (by the backend), in
        the same order: what both a RecordRow and a Record are made of."""
        (rid, key, scope, value_type, value_json, status, observed_at, recorded_at, verified_at,
         ttl, source, authority, actor, reference, supersedes, superseded_by, version,
         status_reason, status_changed_at) = row
        decode_time = self._decode_present_time
        return (
            rid, key, scope, value_type, self._decode_json(value_json), status, decode_time(observed_at),
            decode_time(recorded_at), decode_time(verified_at) if verified_at is not None else None, ttl,
            source, authority, actor, reference, supersedes, superseded_by, version, status_reason,
            decode_time(status_changed_at) if status_changed_at is not None else None,
        )

    def _row_from_columns(self, row: Sequence[Any]) -> RecordRow:
        # tuple.__new__ rather than RecordRow._make: one C call, no length check in Python
        # (_decoded always gives the 19 fields); this runs once per row read.
        return _new_row(RecordRow, self._decoded(row))

    def _record_from_row(self, row: Sequence[Any]) -> Record:
        # Straight to the model (rows.record_from_values, the one conversion RecordRow.to_record
        # uses too), without a RecordRow in between.
        return record_from_values(self._decoded(row))

    def _record_params(self, record: Record) -> tuple[Any, ...]:
        return (
            record.id, record.key, record.scope, record.value_type.value,
            self._encode_json(record.value), record.status.value,
            self._encode_time(record.time.observed_at), self._encode_time(record.time.recorded_at),
            self._encode_time(record.time.verified_at), record.time.ttl_seconds,
            record.provenance.source.value, record.provenance.authority.value,
            record.provenance.actor, record.provenance.reference, record.supersedes,
            record.superseded_by, record.version, record.status_reason,
            self._encode_time(record.status_changed_at),
        )

    def _link_from_row(self, row: Sequence[Any]) -> Link:
        from statewise.records import Evidence, Link, LinkKind

        lid, kind, from_record, to_record, scope, evidence_json, reason, actor, created_at = row
        evidence = self._decode_json(evidence_json) if evidence_json is not None else None
        return Link(
            id=lid,
            kind=LinkKind(kind),
            from_record=from_record,
            to_record=to_record,
            scope=scope,
            evidence=Evidence.model_validate(evidence) if evidence is not None else None,
            reason=reason,
            actor=actor,
            created_at=self._decode_present_time(created_at),
        )

    def _insert_record(self, cur: Any, record: Record) -> None:
        try:
            with self._statement_guard():
                cur.execute(self._sql(_INSERT_RECORD), self._record_params(record))
        except Exception as error:
            if self._is_unique_violation(error):
                existing = self._fetch_active(cur, record.key, record.scope)
                raise ActiveRecordExistsError(
                    record.key, record.scope, existing.id if existing else "?"
                ) from None
            raise

    def _link_params(self, link: Link) -> tuple[Any, ...]:
        return (
            link.id, link.kind.value, link.from_record, link.to_record, link.scope,
            self._encode_json(link.evidence.model_dump(mode="json")) if link.evidence else None,
            link.reason, link.actor, self._encode_time(link.created_at),
        )

    def _insert_link(self, cur: Any, link: Link) -> None:
        cur.execute(self._sql(_INSERT_LINK), self._link_params(link))

    def _fetch(self, cur: Any, record_id: str, *, lock: bool = False) -> Record:
        cur.execute(self._select_by_id + self._lock_suffix if lock else self._select_by_id, (record_id,))
        row = cur.fetchone()
        if row is None:
            raise RecordNotFoundError(record_id)
        return self._record_from_row(row)

    def _fetch_active(self, cur: Any, key: str, scope: str) -> Record | None:
        cur.execute(self._select_active, (key, scope))
        row = cur.fetchone()
        return self._record_from_row(row) if row else None

    def _set_status(
        self, cur: Any, record: Record, status: RecordStatus, *, reason: str, at: datetime,
        superseded_by: str | None = None,
    ) -> Record:
        """Move an active record to ``status`` if it is still at ``record.version``."""
        from statewise.records import Record

        cur.execute(
            self._sql(
                "UPDATE sw_records SET status = ?, superseded_by = ?, status_reason = ?, "
                "status_changed_at = ?, version = version + 1 "
                f"WHERE id = ? AND version = ? AND status = '{_ACTIVE}'"
            ),
            (status.value, superseded_by, reason, self._encode_time(at), record.id, record.version),
        )
        if cur.rowcount != 1:
            self._raise_stale(cur, record.id, record.version)
        # A copy with the changed fields (what model_copy(update=...) gives), without its walk.
        return _trusted(Record, {
            **record.__dict__, "status": status, "superseded_by": superseded_by, "status_reason": reason,
            "status_changed_at": at, "version": record.version + 1,
        })

    def _raise_stale(self, cur: Any, record_id: str, expected: int) -> None:
        from statewise.records import RecordStatus

        current = self._fetch(cur, record_id)
        if current.version == expected and current.status is not RecordStatus.ACTIVE:
            raise TransitionError(record_id, current.status.value, "change")
        raise StaleVersionError(record_id, expected, current.version, current.status.value)

    def _locked_active(self, cur: Any, record_id: str, expected_version: int, operation: str) -> Record:
        from statewise.records import RecordStatus

        record = self._fetch(cur, record_id, lock=True)
        if record.version != expected_version:
            raise StaleVersionError(record_id, expected_version, record.version, record.status.value)
        if record.status is not RecordStatus.ACTIVE:
            hint = f"superseded by {record.superseded_by}" if record.superseded_by else ""
            raise TransitionError(record_id, record.status.value, operation, hint)
        return record

    # --- writing ----------------------------------------------------------------------

    def _typed_draft(self, draft: RecordDraft) -> tuple[ValueType, int | None]:
        """Check a draft against the key schema; return its value type and TTL."""
        return self._check_typed(draft.key, draft.value, draft.value_type, draft.ttl_seconds)

    def _check_typed(
        self, key: str, value: Any, value_type: ValueType | None, ttl: int | None
    ) -> tuple[ValueType, int | None]:
        """Check a key, value and type against the key schema; return the type and TTL."""
        choices = None
        if self.key_schema is not None:
            declared = self.key_schema.key_type(key)
            if declared is None:
                raise KeyNameError(key, "the contract in force does not declare this key")
            if value_type is not None and value_type is not declared.value_type:
                raise ValueTypeError(
                    key=key, expected=f"type {declared.value_type.value}", got=value_type.value
                )
            value_type, choices = declared.value_type, declared.choices
            ttl = ttl if ttl is not None else declared.ttl_seconds
        if value_type is None:
            raise ValueTypeError(key=key, expected="a declared value type", got=None)
        check_value(value, value_type, choices=choices, key=key)
        return value_type, ttl

    def put(self, draft: RecordDraft, *, replace: bool = False, reason: str = "") -> Record:
        from statewise.records import Link, LinkKind, Record, RecordStatus, RecordTime, new_id, utcnow
        from statewise.store.grounding import evidence_of

        value_type, ttl = self._typed_draft(draft)
        now = utcnow()
        record = Record(
            id=new_id("rec"),
            key=draft.key,
            value=draft.value,
            value_type=value_type,
            scope=draft.scope,
            time=RecordTime(
                observed_at=draft.observed_at or now, recorded_at=now,
                verified_at=draft.verified_at, ttl_seconds=ttl,
            ),
            provenance=draft.provenance,
        )
        with self._write() as cur:
            existing = self._fetch_active(cur, draft.key, draft.scope)
            if existing is not None:
                if not replace:
                    raise ActiveRecordExistsError(draft.key, draft.scope, existing.id)
                self._set_status(
                    cur, existing, RecordStatus.SUPERSEDED, reason=reason or "replaced",
                    at=now, superseded_by=record.id,
                )
                checkpoint("put:replaced")
                record = record.model_copy(update={"supersedes": existing.id})
            self._insert_record(cur, record)
            if existing is not None:
                self._insert_link(cur, Link(
                    id=new_id("lnk"), kind=LinkKind.SUPERSEDE, from_record=existing.id,
                    to_record=record.id, scope=record.scope, evidence=evidence_of(record),
                    reason=reason or "replaced", actor=draft.provenance.actor, created_at=now,
                ))
        return record

    def supersede(
        self, record_id: str, evidence: Evidence, *, expected_version: int, reason: str = ""
    ) -> Supersession:
        from statewise.records import Link, LinkKind, Record, RecordStatus, RecordTime, Supersession, new_id, utcnow
        from statewise.store.grounding import grounded_scope

        now = utcnow()
        new_id_ = _new_id("rec")
        detail = reason or evidence.detail or "corrected"
        with self._write() as cur:
            now_text = self._encode_time(now)
            # The common case first (store.correction): evidence in the record's own scope, one
            # UPDATE that checks and marks it; when it changed nothing, the general path below.
            old = mark_in_scope(self, cur, record_id, evidence, expected_version, new_id_, detail, now_text)
            if old is not None:
                checkpoint("supersede:marked")
                return write_in_scope(self, cur, old, evidence, new_id_, now, now_text, reason)
            old = self._locked_active(cur, record_id, expected_version, "supersede")
            target = grounded_scope(old, evidence)
            if same_value(evidence.value, old.value, old.value_type) and target == old.scope:
                raise GroundingError(record_id, "the evidence confirms the value; use confirm()")
            replaced: Record | None = None
            if target == old.scope:
                # Evidence from a scope that contains the record's: the same correction.
                old = self._set_status(cur, old, RecordStatus.SUPERSEDED, reason=detail, at=now,
                                       superseded_by=new_id_)
                checkpoint("supersede:marked")
                return write_in_scope(self, cur, old, evidence, new_id_, now, now_text, reason)
            new = Record(
                id=new_id("rec"), key=old.key, value=evidence.value, value_type=old.value_type,
                scope=target,
                time=RecordTime(
                    observed_at=evidence.observed_at, recorded_at=now,
                    verified_at=evidence.observed_at, ttl_seconds=old.time.ttl_seconds,
                ),
                provenance=evidence.provenance(),
            )
            # Narrowing: the general record stays in force outside the evidence's scope.
            replaced = self._fetch_active(cur, old.key, target)
            if replaced is not None:
                new = new.model_copy(update={"supersedes": replaced.id})
                replaced = self._set_status(
                    cur, replaced, RecordStatus.SUPERSEDED, reason=reason or "narrowed correction",
                    at=now, superseded_by=new.id,
                )
            checkpoint("supersede:marked")
            self._insert_record(cur, new)
            link = Link(
                id=new_id("lnk"), kind=LinkKind.NARROW, from_record=old.id, to_record=new.id,
                scope=target, evidence=evidence, reason=reason, actor=evidence.actor, created_at=now,
            )
            self._insert_link(cur, link)
            if replaced is not None:
                self._insert_link(cur, link.model_copy(
                    update={"id": new_id("lnk"), "kind": LinkKind.SUPERSEDE, "from_record": replaced.id}
                ))
        return Supersession(old=old, new=new, link=link, replaced=replaced)

    def confirm(self, record_id: str, evidence: Evidence, *, expected_version: int) -> Record:
        from statewise.records import Link, LinkKind, new_id, utcnow
        from statewise.store.grounding import grounded_scope

        now = utcnow()
        with self._write() as cur:
            record = self._locked_active(cur, record_id, expected_version, "confirm")
            target = grounded_scope(record, evidence)
            if not same_value(evidence.value, record.value, record.value_type) or target != record.scope:
                raise GroundingError(record_id, "the evidence does not confirm the value in this scope")
            verified = max(evidence.observed_at, record.time.verified_at or evidence.observed_at)
            cur.execute(
                self._sql("UPDATE sw_records SET verified_at = ?, version = version + 1 "
                          "WHERE id = ? AND version = ? AND status = ?"),
                (self._encode_time(verified), record.id, record.version, _ACTIVE),
            )
            if cur.rowcount != 1:
                self._raise_stale(cur, record.id, record.version)
            self._insert_link(cur, Link(
                id=new_id("lnk"), kind=LinkKind.VERIFY, from_record=record.id, to_record=record.id,
                scope=record.scope, evidence=evidence, reason="confirmed", actor=evidence.actor,
                created_at=now,
            ))
        return record.model_copy(update={
            "time": record.time.model_copy(update={"verified_at": verified}),
            "version": record.version + 1,
        })

    def retract(self, record_id: str, *, reason: str, actor: str) -> Record:
        from statewise.records import Link, LinkKind, RecordStatus, new_id, utcnow

        now = utcnow()
        with self._write() as cur:
            record = self._fetch(cur, record_id, lock=True)
            if record.status is not RecordStatus.ACTIVE:
                raise TransitionError(record_id, record.status.value, "retract")
            retracted = self._set_status(cur, record, RecordStatus.RETRACTED, reason=reason, at=now)
            self._insert_link(cur, Link(
                id=new_id("lnk"), kind=LinkKind.RETRACT, from_record=record.id, to_record=None,
                scope=record.scope, reason=reason, actor=actor, created_at=now,
            ))
        return retracted

    def revert(self, record_id: str, *, reason: str, actor: str) -> Record | None:
        from statewise.records import Link, LinkKind, RecordStatus, new_id, utcnow

        now = utcnow()
        with self._write() as cur:
            repair = self._fetch(cur, record_id, lock=True)
            if repair.status is not RecordStatus.ACTIVE:
                raise TransitionError(
                    record_id, repair.status.value, "revert",
                    "only the active end of a repair chain can be reverted",
                )
            incoming = [
                link for link in self._links(cur, record_id)
                if link.to_record == record_id and link.kind in (LinkKind.SUPERSEDE, LinkKind.NARROW)
            ]
            if not incoming:
                raise TransitionError(record_id, "not a repair", "revert", "it did not replace anything")
            previous_link = next((lk for lk in incoming if lk.kind is LinkKind.SUPERSEDE), None)
            if previous_link is None:
                # A narrowing that replaced nothing: withdraw it; the general record applies again.
                self._set_status(cur, repair, RecordStatus.RETRACTED, reason=f"reverted: {reason}", at=now)
                self._insert_link(cur, Link(
                    id=new_id("lnk"), kind=LinkKind.REVERT, from_record=repair.id, to_record=None,
                    scope=repair.scope, reason=reason, actor=actor, created_at=now,
                ))
                return None
            previous = self._fetch(cur, previous_link.from_record)
            restored = previous.model_copy(update={
                "id": new_id("rec"), "status": RecordStatus.ACTIVE, "supersedes": repair.id,
                "superseded_by": None, "version": 1, "status_reason": None, "status_changed_at": None,
                "time": previous.time.model_copy(update={"recorded_at": now}),
            })
            self._set_status(
                cur, repair, RecordStatus.SUPERSEDED, reason=f"reverted: {reason}", at=now,
                superseded_by=restored.id,
            )
            checkpoint("revert:marked")
            self._insert_record(cur, restored)
            self._insert_link(cur, Link(
                id=new_id("lnk"), kind=LinkKind.REVERT, from_record=repair.id, to_record=restored.id,
                scope=repair.scope, reason=reason, actor=actor, created_at=now,
            ))
        return restored

    def expire_lapsed(self, now: datetime | None = None) -> list[Record]:
        from statewise.records import Link, LinkKind, RecordStatus, new_id, utcnow

        now = now or utcnow()
        expired: list[Record] = []
        with self._write() as cur:
            cur.execute(
                self._sql(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = ? AND ttl_seconds IS NOT NULL"),
                (_ACTIVE,),
            )
            for record in [self._record_from_row(row) for row in cur.fetchall()]:
                if record.is_stale(now):
                    expired.append(self._set_status(cur, record, RecordStatus.EXPIRED, reason="ttl lapsed", at=now))
                    self._insert_link(cur, Link(
                        id=new_id("lnk"), kind=LinkKind.EXPIRE, from_record=record.id, to_record=None,
                        scope=record.scope, reason="ttl lapsed", actor="statewise", created_at=now,
                    ))
        return expired

    # --- reading ----------------------------------------------------------------------

    # One statement sees one consistent state by itself, so the point reads need no
    # transaction around them (on PostgreSQL that is two round trips fewer).

    def get(self, record_id: str) -> Record:
        row = self._one_row(self._select_by_id, (record_id,))
        if row is None:
            raise RecordNotFoundError(record_id)
        return self._record_from_row(row)

    def get_active(self, key: str, scope: str) -> Record | None:
        # Stored scopes are canonical, so a text that finds a row was canonical already:
        # parse it (2-4 us, a tenth of the call) only when the lookup found nothing, and look
        # again when its canonical form differs. A bad scope still raises ScopeError there.
        row = self._one_row(self._select_active, (key, scope)) if scope.__class__ is str else None
        if row is None:
            canonical = _canonical_scope(scope)
            if canonical == scope:
                return None
            row = self._one_row(self._select_active, (key, canonical))
            if row is None:
                return None
        return self._record_from_row(row)

    def get_row(self, record_id: str) -> RecordRow:
        row = self._one_row(self._select_by_id, (record_id,))
        if row is None:
            raise RecordNotFoundError(record_id)
        return self._row_from_columns(row)

    def retrieve(
        self,
        task: TaskScope,
        *,
        keys: Sequence[str] | None = None,
        text: str | None = None,
        now: datetime | None = None,
        near_miss_limit: int = 20,
    ) -> Retrieval:
        from statewise.records import Retrieval

        parts = self._retrieval(task, keys, text, now, near_miss_limit, self._record_from_row)
        # The records were validated when written; skip re-validating them on this hot path.
        return Retrieval.model_construct(task=str(task), records=parts[0], stale=parts[1], shadowed=parts[2],
                                         near_misses=parts[3])

    def retrieve_rows(
        self,
        task: TaskScope,
        *,
        keys: Sequence[str] | None = None,
        text: str | None = None,
        now: datetime | None = None,
        near_miss_limit: int = 20,
    ) -> RetrievalRows:
        records, stale, shadowed, near = self._retrieval(task, keys, text, now, near_miss_limit,
                                                         self._row_from_columns)
        return RetrievalRows(str(task), tuple(records), tuple(stale), tuple(shadowed), tuple(near))

    def _retrieval(self, task: TaskScope, keys: Sequence[str] | None, text: str | None, now: datetime | None,
                   near_miss_limit: int, decode: Callable[[Sequence[Any]], _R]) -> tuple[list[_R], ...]:
        """A retrieval's four lists (in force, stale, shadowed, near misses), each row made by
        ``decode`` (a Record for ``retrieve``, a RecordRow for ``retrieve_rows``)."""
        now = now or datetime.now(UTC)  # records.utcnow
        applicable = task.applicable_scopes()
        applicable_text = [str(s) for s in applicable]
        wanted = key_matcher(keys, text)
        statement, params = self._retrieve_statement(task, applicable_text, keys, text, near_miss_limit)
        # One statement: the records in force and every near-miss candidate come back in one
        # round trip, from one snapshot, with no transaction to open and close around it.
        rows = self._all_rows(statement, params)
        main: list[Any] = []
        near_rows: list[Any] = []
        for row in rows:
            (main if row[0] == 0 else near_rows).append(row)
        prefixes = (1 if task.repo else 0) + (1 if task.workspace else 0)
        near = (self._near_misses(near_rows, prefixes, applicable_text, wanted, near_miss_limit, decode)
                if near_rows else [])
        # Most specific first within each key: the statement gives each row its scope's rank,
        # so the rows sort on two of their own columns, in C, before any is decoded; the first
        # row of a key (that passes the filter) is in force and the rest are shadowed.
        main.sort(key=_KEY_THEN_RANK)
        records: list[_R] = []
        stale: list[_R] = []
        shadowed: list[_R] = []
        previous = None
        for row in main:
            record = decode(row[2:])
            if wanted is not None and not wanted(record):  # type: ignore[arg-type]
                continue
            if row[3] == previous:
                shadowed.append(record)
                continue
            previous = row[3]
            # Column 11 is the row's ttl_seconds: only a record with a TTL can be stale.
            (stale if row[11] is not None and record.is_stale(now) else records).append(record)  # type: ignore[attr-defined]
        return records, stale, shadowed, near

    def _retrieve_statement(
        self, task: TaskScope, applicable: list[str], keys: Sequence[str] | None, text: str | None, limit: int,
    ) -> tuple[str, list[Any]]:
        """The SQL of a retrieval (rows of part, rank or seq, record columns...): part 0 is the
        active records in the task's scopes, each with its scope's rank; parts
        1, 2, ... are the near-miss candidates: active records that a careless reader might
        apply here but that do not apply (the same repository on another branch, workspaces
        below the task's directory, and, when keys are named, the same keys anywhere else)."""
        marks = ", ".join("?" * len(applicable))
        # Part 0's second column is the rank of the row's scope among the applicable ones
        # (0 = most specific); the near-miss parts' is seq.
        rank = " ".join(f"WHEN ? THEN {position}" for position in range(len(applicable)))
        parts = [f"SELECT 0, CASE scope {rank} END, {RECORD_COLUMNS} FROM sw_records "
                 f"WHERE status = '{_ACTIVE}' AND scope IN ({marks})"]
        params: list[Any] = [*applicable, *applicable]
        if limit > 0:
            prefixes = []
            if task.repo:
                prefixes.append(f"repo:{task.repo}@")
            if task.workspace:
                prefixes.append("workspace:" + task.workspace.rstrip("/") + "/")
            # Without a key or text filter every candidate is kept, so ``limit`` rows suffice.
            window = limit if keys is None and text is None else limit * 4
            for number, prefix in enumerate(prefixes, start=1):
                # The inner query walks the covering (scope, key) index in its own order, so it
                # needs no sort, and stops at the window; only those rows are read in full.
                parts.append(
                    f"SELECT {number}, seq, {RECORD_COLUMNS} FROM sw_records WHERE seq IN ("
                    f"SELECT seq FROM sw_records WHERE status = '{_ACTIVE}' AND scope >= ? AND scope < ? "
                    f"AND scope NOT IN ({marks}) ORDER BY scope, key LIMIT ?)"
                )
                params += [prefix, _prefix_upper_bound(prefix), *applicable, window]
            for key in keys or ():
                parts.append(
                    f"SELECT {len(parts)}, seq, {RECORD_COLUMNS} FROM sw_records WHERE seq IN ("
                    f"SELECT seq FROM sw_records WHERE status = '{_ACTIVE}' AND key = ? ORDER BY seq LIMIT ?)"
                )
                params += [key, limit + len(applicable)]
        return self._sql(" UNION ALL ".join(parts)), params

    def _near_misses(self, rows: list[Any], prefixes: int, applicable: list[str], wanted: Any,
                     limit: int, decode: Callable[[Sequence[Any]], _R]) -> list[_R]:
        """The near misses among a retrieval's candidate rows (part, seq, record columns...):
        the prefix parts (1..``prefixes``) by (scope, key) while fewer than ``limit`` were
        found, then the key parts in insertion order; at most ``limit``."""
        found: dict[str, _R] = {}
        by_prefix = sorted((row for row in rows if row[0] <= prefixes), key=lambda row: (row[0], row[4], row[3]))
        for row in by_prefix:
            if len(found) >= limit:
                break
            if row[2] in found:
                continue
            record = decode(row[2:])
            if wanted is None or wanted(record):
                found[row[2]] = record
        by_key = sorted((row for row in rows if row[0] > prefixes), key=lambda row: (row[0], row[1]))
        for row in by_key:
            if row[4] not in applicable and row[2] not in found:
                found[row[2]] = decode(row[2:])
        return list(found.values())[:limit]

    @contextmanager
    def _read_one(self) -> Iterator[Any]:
        """A cursor for one statement, which sees one consistent state by itself."""
        with self._read() as cur:
            yield cur

    def _one_row(self, statement: str, params: Sequence[Any]) -> Any:
        """The first row of one read statement (already in the driver's style), or None."""
        with self._read_one() as cur:
            cur.execute(statement, params)
            return cur.fetchone()

    def _all_rows(self, statement: str, params: Sequence[Any]) -> list[Any]:
        """Every row of one read statement (already in the driver's style)."""
        with self._read_one() as cur:
            cur.execute(statement, params)
            return cur.fetchall()  # type: ignore[no-any-return]

    def history(self, key: str, scope: str) -> list[Record]:
        with self._read() as cur:
            cur.execute(
                self._sql(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? ORDER BY seq"),
                (key, _canonical_scope(scope)),
            )
            return [self._record_from_row(row) for row in cur.fetchall()]

    def _links(self, cur: Any, record_id: str) -> list[Link]:
        cur.execute(
            self._sql(f"SELECT {LINK_COLUMNS} FROM sw_links WHERE from_record = ? OR to_record = ? ORDER BY seq"),
            (record_id, record_id),
        )
        return [self._link_from_row(row) for row in cur.fetchall()]

    def links(self, record_id: str) -> list[Link]:
        with self._read() as cur:
            self._fetch(cur, record_id)
            return self._links(cur, record_id)

    def lineage(self, record_id: str) -> Lineage:
        from statewise.records import Lineage, LinkKind

        chain_kinds = (LinkKind.SUPERSEDE, LinkKind.NARROW, LinkKind.REVERT)
        with self._read() as cur:
            self._fetch(cur, record_id)
            seen_records = {record_id}
            seen_links: dict[str, Link] = {}
            frontier = [record_id]
            while frontier:
                current = frontier.pop()
                for link in self._links(cur, current):
                    seen_links.setdefault(link.id, link)
                    if link.kind not in chain_kinds:
                        continue
                    for neighbour in (link.from_record, link.to_record):
                        if neighbour and neighbour not in seen_records:
                            seen_records.add(neighbour)
                            frontier.append(neighbour)
            records = [self._fetch(cur, rid) for rid in seen_records]
            cur.execute(
                self._sql(f"SELECT seq, id FROM sw_records WHERE id IN ({', '.join('?' * len(seen_records))})"),
                tuple(seen_records),
            )
            order = dict((rid, seq) for seq, rid in cur.fetchall())
            link_order: dict[str, int] = {}
            if seen_links:
                cur.execute(
                    self._sql(f"SELECT seq, id FROM sw_links WHERE id IN ({', '.join('?' * len(seen_links))})"),
                    tuple(seen_links),
                )
                link_order = dict((lid, seq) for seq, lid in cur.fetchall())
        records.sort(key=lambda r: order[r.id])
        links = sorted(seen_links.values(), key=lambda lk: link_order[lk.id])
        return Lineage(record_id=record_id, records=records, links=links)

    def records(self) -> Iterator[Record]:
        with self._read() as cur:
            cur.execute(self._sql(f"SELECT {RECORD_COLUMNS} FROM sw_records ORDER BY seq"))
            rows = cur.fetchall()
        return iter([self._record_from_row(row) for row in rows])

    def all_links(self) -> Iterator[Link]:
        with self._read() as cur:
            cur.execute(self._sql(f"SELECT {LINK_COLUMNS} FROM sw_links ORDER BY seq"))
            rows = cur.fetchall()
        return iter([self._link_from_row(row) for row in rows])

    def count(self, *, status: str | None = None) -> int:
        from statewise.records import RecordStatus

        with self._read() as cur:
            if status is None:
                cur.execute(self._sql("SELECT COUNT(*) FROM sw_records"))
            else:
                cur.execute(self._sql("SELECT COUNT(*) FROM sw_records WHERE status = ?"),
                            (RecordStatus(status).value,))
            return int(cur.fetchone()[0])

    # --- moving data ------------------------------------------------------------------

    def export_jsonl(self, out: IO[str]) -> int:
        lines = 0
        for record in self.records():
            out.write(json.dumps({"type": "record", **record.model_dump(mode="json")}) + "\n")
            lines += 1
        for link in self.all_links():
            out.write(json.dumps({"type": "link", **link.model_dump(mode="json")}) + "\n")
            lines += 1
        return lines

    def import_jsonl(self, lines: Iterable[str], *, source: str = "<input>",
                     progress: Progress | None = None) -> int:
        """Import JSON Lines, streamed: ``lines`` is read lazily (an open file works) and
        written in batches inside one transaction, so memory stays bounded and the import
        is still all or nothing. ``progress`` is called after each batch with the number
        of lines and characters read so far."""
        from statewise.store.bulk import LineEncoder

        count = 0
        encoder = LineEncoder(source, self.key_schema, self._encode_time, self._bulk_json)
        batches = self._import_batches(encoder, lines)
        with self._write() as cur:
            start_seq = self._max_seq(cur)
            self._begin_bulk(cur)
            for batch in batches:
                try:
                    with self._savepoint(cur):
                        self._bulk_insert(cur, batch)
                except Exception as error:
                    if not self._is_unique_violation(error):
                        raise
                    self._explain_conflict(cur, batch, source, start_seq)
                    raise
                count += len(batch.record_rows) + len(batch.link_rows)
                self._bulk_progress(cur, batch, start_seq)
                if progress is not None:
                    progress(batch.lines_read, batch.chars_read)
            self._end_bulk(cur, source)
        return count

    def _import_batches(self, encoder: LineEncoder, lines: Iterable[str]) -> Iterator[ImportBatch]:
        """The import's batches, parsed in a second process for a large file (see
        PARALLEL_IMPORT_BYTES); a parsing process that died is StoreUnavailableError."""
        from statewise.store.bulk import parallel_batches

        if not self._parse_apart(lines):
            yield from encoder.batches(lines)
            return
        try:
            yield from parallel_batches(encoder, lines)
        except RuntimeError as error:
            raise StoreUnavailableError(self.location, f"import failed, nothing was written: {error}") from None

    #: An open file at least this large is parsed in a second process while this one writes
    #: (on a machine with more than one core and where fork exists); smaller input, or any
    #: other iterable, is parsed here.
    PARALLEL_IMPORT_BYTES = 32 * 2**20

    def _parse_apart(self, lines: Iterable[str]) -> bool:
        # Not stdin: a multiprocessing child closes its sys.stdin before it starts.
        if sys.platform != "linux" or len(os.sched_getaffinity(0)) < 2 or lines is sys.stdin:
            return False
        try:
            size = os.fstat(lines.fileno()).st_size  # type: ignore[attr-defined]
        except (AttributeError, OSError, ValueError):
            return False
        return bool(size >= self.PARALLEL_IMPORT_BYTES)

    def _bulk_json(self, value: Any) -> Any:
        """``_encode_json`` for the import's rows (a backend may write JSON another way)."""
        return self._encode_json(value)

    def _bulk_insert(self, cur: Any, batch: ImportBatch) -> None:
        """Write one batch's rows (a backend may use a faster path than executemany)."""
        if batch.record_rows:
            cur.executemany(self._sql(_INSERT_RECORD), batch.record_rows)
        if batch.link_rows:
            cur.executemany(self._sql(_INSERT_LINK), batch.link_rows)

    def _bulk_progress(self, cur: Any, batch: ImportBatch, start_seq: int) -> None:
        """Called after each batch is written (a backend may change strategy mid-import)."""

    def _max_seq(self, cur: Any) -> int:
        cur.execute(self._sql("SELECT COALESCE(MAX(seq), 0) FROM sw_records"))
        return int(cur.fetchone()[0])

    def _begin_bulk(self, cur: Any) -> None:
        """Prepare the connection for a large write (a backend may enlarge its cache)."""

    def _end_bulk(self, cur: Any, source: str) -> None:
        """Undo ``_begin_bulk``; may raise ImportFormatError (still inside the transaction)."""

    @contextmanager
    def _savepoint(self, cur: Any) -> Iterator[None]:
        """A savepoint: an error inside rolls back only what was done inside."""
        cur.execute("SAVEPOINT sw_bulk")
        try:
            yield
        except BaseException:
            cur.execute("ROLLBACK TO SAVEPOINT sw_bulk")
            cur.execute("RELEASE SAVEPOINT sw_bulk")
            raise
        cur.execute("RELEASE SAVEPOINT sw_bulk")

    def _explain_conflict(self, cur: Any, batch: ImportBatch, source: str, start_seq: int) -> None:
        """A batch broke a unique constraint: replay it row by row to name the line."""
        for number, record in batch.records():
            cur.execute(self._sql("SELECT seq FROM sw_records WHERE id = ?"), (record.id,))
            row = cur.fetchone()
            if row is not None:
                where = "appears twice" if row[0] > start_seq else "is already in the store"
                raise ImportFormatError(source, number, f"record {record.id} {where}")
            try:
                self._insert_record(cur, record)
            except ActiveRecordExistsError as error:
                raise ImportFormatError(source, number, str(error)) from None
        for number, link in batch.links():
            cur.execute(self._sql("SELECT 1 FROM sw_links WHERE id = ?"), (link.id,))
            if cur.fetchone() is not None:
                raise ImportFormatError(source, number, f"link {link.id} appears twice or is already in the store")
            self._insert_link(cur, link)

    def snapshot(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as out:
            self.export_jsonl(out)

    def restore(self, path: str | Path) -> None:
        from statewise.store.bulk import parse_export  # the bulk module: only when a snapshot is restored

        with open(path, encoding="utf-8") as handle:
            records, links = parse_export(handle, str(path))
        with self._write() as cur:
            cur.execute(self._sql("DELETE FROM sw_links"))
            cur.execute(self._sql("DELETE FROM sw_records"))
            for _, record in records:
                self._insert_record(cur, record)
            for _, link in links:
                self._insert_link(cur, link)

