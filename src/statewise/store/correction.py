"""The hot path of ``supersede``: a correction in the record's own scope, in three statements.

A correction marks the old record superseded (if it is still active at the expected version),
inserts the new record and inserts the link, in one transaction. The mark is one ``UPDATE ...
RETURNING`` that checks the version, the status, the key, the scope and the value type and
returns the old row as it now stands, so no ``SELECT`` reads it first; the two inserts take
their values from that row and the evidence, encoded once (a time used three times is encoded
once). The models returned are built from those same values without validating them again:
every part was validated already (the old row when it was written, the evidence when it was
made). When the ``UPDATE`` changes nothing (another version, not active, not this key or type,
evidence from another scope, no such record) nothing was written, and the store takes its
general path, which reads the record and says why, or narrows.
"""

from __future__ import annotations

import os
import time as _time
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from statewise.errors import GroundingError
from statewise.store.columns import ACTIVE, INSERT_LINK, INSERT_RECORD, RECORD_COLUMNS
from statewise.store.rows import record_from_values
from statewise.values import same_value

if TYPE_CHECKING:
    from pydantic import BaseModel

    from statewise.records import Evidence, Record, Supersession
    from statewise.store.sql import SQLStore

    # Only for the type checker: a bound given as text is compiled at run time, and the first
    # compile() of a process sets up Python's AST types (about a quarter of `python -c pass`).
    _M = TypeVar("_M", bound=BaseModel)

__all__ = ["MARK_IN_SCOPE", "fast_id", "mark_in_scope", "trusted", "write_in_scope"]

_object_setattr = object.__setattr__
_new_instance = object.__new__


def trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """What ``cls.model_construct(**values)`` builds when ``values`` holds every field, in
    field order, without model_construct's per-field alias and default walk."""
    instance = _new_instance(cls)
    _object_setattr(instance, "__dict__", values)
    _object_setattr(instance, "__pydantic_fields_set__", set(values))
    _object_setattr(instance, "__pydantic_extra__", None)
    _object_setattr(instance, "__pydantic_private__", None)
    return instance


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]  # 10 bits -> 2 digits
_ID_SHIFTS = range(120, -1, -10)


def fast_id(prefix: str) -> str:
    """What :func:`statewise.records.new_id` makes (48 bits of milliseconds, 80 random bits,
    26 Crockford base32 digits), two digits per step instead of one."""
    number = (int(_time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    pairs = _CROCKFORD_PAIRS
    return prefix + "_" + "".join([pairs[(number >> shift) & 1023] for shift in _ID_SHIFTS])


#: Mark the record superseded if it is still the active record at the expected version, of the
#: evidence's key and type, in exactly the evidence's scope; return the changed row.
MARK_IN_SCOPE = (
    "UPDATE sw_records SET status = 'superseded', superseded_by = ?, status_reason = ?, status_changed_at = ?, "
    f"version = version + 1 WHERE id = ? AND version = ? AND status = '{ACTIVE}' AND key = ? AND scope = ? "
    f"AND value_type = ? RETURNING {RECORD_COLUMNS}"
)


def mark_in_scope(store: SQLStore, cur: Any, record_id: str, evidence: Evidence, expected_version: int,
                  new_id: str, detail: str, now_text: Any) -> Record | None:
    """The old record, marked superseded by ``new_id``, when ``evidence`` corrects it in its own
    scope; None when the statement changed nothing (the caller's general path says why).
    Evidence that repeats the value raises GroundingError (the caller's transaction rolls the
    mark back)."""
    cur.execute(store._sql(MARK_IN_SCOPE), (
        new_id, detail, now_text, record_id, expected_version, evidence.key, evidence.scope,
        evidence.value_type.value,
    ))
    # fetchall: the statement runs to its end (SQLite makes the change on its first step).
    rows = cur.fetchall()
    if not rows:
        return None
    old = store._record_from_row(rows[0])
    if same_value(evidence.value, old.value, old.value_type):
        raise GroundingError(record_id, "the evidence confirms the value; use confirm()")
    return old


def write_in_scope(store: SQLStore, cur: Any, old: Record, evidence: Evidence, new_id: str, now: datetime,
                   now_text: Any, reason: str) -> Supersession:
    """Insert the record ``new_id`` that replaces ``old`` (already marked) in its own scope with
    ``evidence``'s value, and the supersede link; the Supersession, as ``supersede`` returns it."""
    from statewise.records import Link, LinkKind, Supersession

    observed = evidence.observed_at
    observed_text = store._encode_time(observed)
    source, authority, actor, reference = (evidence.source.value, evidence.authority.value, evidence.actor,
                                           evidence.reference)
    key, scope, value_type, ttl = old.key, old.scope, old.value_type.value, old.time.ttl_seconds
    # No statement guard: the only active record of this key and scope is the one this
    # transaction just marked, so the insert cannot meet the one-active index.
    cur.execute(store._sql(INSERT_RECORD), (
        new_id, key, scope, value_type, store._encode_json(evidence.value), ACTIVE, observed_text, now_text,
        observed_text, ttl, source, authority, actor, reference, old.id, None, 1, None, None,
    ))
    link_id = fast_id("lnk")
    cur.execute(store._sql(INSERT_LINK), (
        link_id, LinkKind.SUPERSEDE.value, old.id, new_id, scope,
        store._encode_json(evidence.model_dump(mode="json")), reason, actor, now_text,
    ))
    new = record_from_values((
        new_id, key, scope, value_type, evidence.value, ACTIVE, observed, now, observed, ttl, source, authority,
        actor, reference, old.id, None, 1, None, None,
    ))
    link = trusted(Link, {
        "id": link_id, "kind": LinkKind.SUPERSEDE, "from_record": old.id, "to_record": new_id, "scope": scope,
        "evidence": evidence, "reason": reason, "actor": actor, "created_at": now,
    })
    return trusted(Supersession, {"old": old, "new": new, "link": link, "replaced": None})
