"""``statewise store check``: verify a store's invariants, on any backend (an fsck).

:func:`check_store` reads every record and link through the :class:`~statewise.store.base.Store`
interface and reports each violation of the invariants documented in docs/store.md:

* one active record per (key, scope), and (on the SQL backends) the partial unique index
  that enforces it is present and unique;
* links both ways: ``a.superseded_by == b`` exactly when ``b.supersedes == a``, each such
  pair has the ``supersede`` or ``revert`` link that made it, every link's records exist and
  agree with it, and a status other than ``active`` has the link that explains it;
* evidence present: every ``supersede``, ``narrow`` and ``verify`` link carries evidence for
  its key, and that evidence holds the value the link produced or confirmed;
* versions monotone: a record's version is 1, plus one per confirmation, plus one when its
  status changed; a successor was stored after the record it replaced (so no chain cycles);
* every value has its declared type and every scope is canonical.

It only reads. It never raises for a violation: a violation is data in the report.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from statewise.errors import StateWiseError
from statewise.records import Link, LinkKind, Record, RecordStatus
from statewise.scopes import Scope
from statewise.store.base import Store
from statewise.values import check_value, same_value

__all__ = ["StoreCheckReport", "Violation", "check_records", "check_store"]

_CHAIN_LINKS = (LinkKind.SUPERSEDE, LinkKind.REVERT)
_EVIDENCE_LINKS = (LinkKind.SUPERSEDE, LinkKind.NARROW, LinkKind.VERIFY)


class Violation(BaseModel):
    """One broken invariant, with the records and link it concerns."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    message: str
    key: str | None = None
    scope: str | None = None
    record_ids: tuple[str, ...] = ()
    link_id: str | None = None


class StoreCheckReport(BaseModel):
    """What ``check_store`` found: counts and every violation (empty when the store is sound)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    location: str
    records: int
    links: int
    active: int
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    def by_code(self) -> dict[str, int]:
        """How many violations of each kind, for a summary line."""
        return dict(Counter(v.code for v in self.violations))


def check_store(store: Store) -> StoreCheckReport:
    """Check every invariant of ``store``; return the report (the store is only read).

    Open a possibly tampered store with ``open_store(location, check_integrity=False)`` so
    that opening does not refuse it before it can be checked.
    """
    violations: list[Violation] = []
    one_active_ok = getattr(store, "one_active_index_ok", None)
    if callable(one_active_ok) and not one_active_ok():
        violations.append(Violation(
            code="missing_unique_index",
            message="the partial unique index sw_records_one_active is missing or altered, so the database "
                    "no longer refuses a second active record for one key and scope",
        ))
    try:
        records = list(store.records())
        links = list(store.all_links())
    except (StateWiseError, KeyError, ValueError) as error:
        # A row the store cannot even map (an unknown status or type written behind its back).
        violations.append(Violation(code="unreadable", message=f"the store's rows cannot be read: {error!r}"))
        return StoreCheckReport(location=store.location, records=0, links=0, active=0,
                                violations=tuple(violations))
    violations.extend(check_records(records, links))
    return StoreCheckReport(
        location=store.location, records=len(records), links=len(links),
        active=sum(1 for r in records if r.status is RecordStatus.ACTIVE), violations=tuple(violations),
    )


def check_records(records: Iterable[Record], links: Iterable[Link]) -> list[Violation]:
    """The invariant violations among ``records`` and ``links``, both in insertion order."""
    records = list(records)
    links = list(links)
    found: list[Violation] = []
    by_id: dict[str, Record] = {}
    order: dict[str, int] = {}
    for position, record in enumerate(records):
        if record.id in by_id:
            found.append(_v("duplicate_id", f"two records share the id {record.id}", record))
        by_id[record.id] = record
        order.setdefault(record.id, position)

    found.extend(_one_active(records))
    for record in records:
        found.extend(_record_itself(record))

    outgoing: dict[str, list[Link]] = defaultdict(list)
    incoming: dict[str, list[Link]] = defaultdict(list)
    for link in links:
        outgoing[link.from_record].append(link)
        if link.to_record is not None:
            incoming[link.to_record].append(link)
        found.extend(_link_itself(link, by_id))

    for record in records:
        found.extend(_pointers(record, by_id, order, outgoing))
        found.extend(_status_and_version(record, outgoing))
    return found


def _v(code: str, message: str, record: Record | None = None, *, records: tuple[str, ...] | None = None,
       link: Link | None = None) -> Violation:
    return Violation(
        code=code, message=message, key=record.key if record else None, scope=record.scope if record else None,
        record_ids=records if records is not None else ((record.id,) if record else ()),
        link_id=link.id if link else None,
    )


def _one_active(records: list[Record]) -> list[Violation]:
    active: dict[tuple[str, str], list[str]] = defaultdict(list)
    for record in records:
        if record.status is RecordStatus.ACTIVE:
            active[(record.key, record.scope)].append(record.id)
    return [
        Violation(code="duplicate_active", key=key, scope=scope, record_ids=tuple(ids),
                  message=f"{len(ids)} active records for {key} in {scope}: {', '.join(ids)}")
        for (key, scope), ids in active.items() if len(ids) > 1
    ]


def _record_itself(record: Record) -> list[Violation]:
    found = []
    try:
        canonical = str(Scope.parse(record.scope))
    except StateWiseError as error:
        found.append(_v("bad_scope", f"record {record.id} has a scope that does not parse: {error}", record))
    else:
        if canonical != record.scope:
            found.append(_v("bad_scope", f"record {record.id} has scope {record.scope!r}, not its canonical "
                                         f"spelling {canonical!r}", record))
    try:
        check_value(record.value, record.value_type, key=record.key)
    except StateWiseError as error:
        found.append(_v("bad_value", f"record {record.id}: {error}", record))
    if record.supersedes is not None and record.supersedes == record.superseded_by:
        found.append(_v("pointer_mismatch", f"record {record.id} supersedes and is superseded by the same record",
                        record))
    return found


def _link_itself(link: Link, by_id: dict[str, Record]) -> list[Violation]:
    found = []
    source = by_id.get(link.from_record)
    target = by_id.get(link.to_record) if link.to_record is not None else None
    if source is None:
        found.append(Violation(code="dangling_link", link_id=link.id, record_ids=(link.from_record,),
                               message=f"{link.kind.value} link {link.id} starts at {link.from_record}, "
                                       "which is not in the store"))
    if link.to_record is not None and target is None:
        found.append(Violation(code="dangling_link", link_id=link.id, record_ids=(link.to_record,),
                               message=f"{link.kind.value} link {link.id} ends at {link.to_record}, "
                                       "which is not in the store"))
    needs_target = link.kind in (LinkKind.SUPERSEDE, LinkKind.NARROW, LinkKind.VERIFY)
    if needs_target and link.to_record is None:
        found.append(_v("link_mismatch", f"{link.kind.value} link {link.id} has no resulting record", source,
                        link=link))
    if source is None or (link.to_record is not None and target is None):
        return found
    pair = (source.id,) + ((target.id,) if target is not None and target.id != source.id else ())
    if target is not None and target.key != source.key:
        found.append(_v("link_mismatch", f"{link.kind.value} link {link.id} joins {source.key} to {target.key}",
                        source, records=pair, link=link))
    if link.kind in _CHAIN_LINKS and target is not None:
        if source.superseded_by != target.id or target.supersedes != source.id:
            found.append(_v("link_mismatch",
                            f"{link.kind.value} link {link.id} says {source.id} -> {target.id}, but "
                            f"{source.id}.superseded_by is {source.superseded_by} and "
                            f"{target.id}.supersedes is {target.supersedes}", source, records=pair, link=link))
        if target.scope != source.scope:
            found.append(_v("link_mismatch", f"{link.kind.value} link {link.id} moves {source.key} from "
                            f"{source.scope} to {target.scope}; only a narrow link changes scope",
                            source, records=pair, link=link))
    if link.kind is LinkKind.VERIFY and target is not None and target.id != source.id:
        found.append(_v("link_mismatch", f"verify link {link.id} joins two records", source, records=pair,
                        link=link))
    if link.kind is LinkKind.NARROW and target is not None and target.scope != link.scope:
        found.append(_v("link_mismatch", f"narrow link {link.id} is for {link.scope}, its record is in "
                        f"{target.scope}", source, records=pair, link=link))
    if link.kind in _EVIDENCE_LINKS:
        evidence = link.evidence
        if evidence is None:
            found.append(_v("missing_evidence", f"{link.kind.value} link {link.id} carries no evidence",
                            source, records=pair, link=link))
        elif evidence.key != source.key:
            found.append(_v("evidence_mismatch", f"{link.kind.value} link {link.id} has evidence about "
                            f"{evidence.key}, its record is {source.key}", source, records=pair, link=link))
        elif target is not None and not same_value(evidence.value, target.value, target.value_type):
            found.append(_v("evidence_mismatch", f"{link.kind.value} link {link.id}: the evidence says "
                            f"{evidence.value!r}, the record it produced holds {target.value!r}",
                            source, records=pair, link=link))
    return found


def _pointers(record: Record, by_id: dict[str, Record], order: dict[str, int],
              outgoing: dict[str, list[Link]]) -> list[Violation]:
    found = []
    if record.superseded_by is not None:
        successor = by_id.get(record.superseded_by)
        if successor is None:
            found.append(_v("dangling_pointer", f"record {record.id} is superseded by {record.superseded_by}, "
                            "which is not in the store", record))
        else:
            pair = (record.id, successor.id)
            if successor.supersedes != record.id:
                found.append(_v("pointer_mismatch", f"{record.id}.superseded_by is {successor.id}, but "
                                f"{successor.id}.supersedes is {successor.supersedes}", record, records=pair))
            if order[successor.id] <= order[record.id]:
                found.append(_v("order", f"{successor.id} replaced {record.id} but was stored before it",
                                record, records=pair))
            if not any(lk.to_record == successor.id and lk.kind in _CHAIN_LINKS for lk in outgoing[record.id]):
                found.append(_v("missing_link", f"{record.id} was replaced by {successor.id} with no supersede "
                                "or revert link between them", record, records=pair))
    if record.supersedes is not None:
        predecessor = by_id.get(record.supersedes)
        if predecessor is None:
            found.append(_v("dangling_pointer", f"record {record.id} supersedes {record.supersedes}, which is "
                            "not in the store", record))
        elif predecessor.superseded_by != record.id:
            found.append(_v("pointer_mismatch", f"{record.id}.supersedes is {predecessor.id}, but "
                            f"{predecessor.id}.superseded_by is {predecessor.superseded_by}", record,
                            records=(predecessor.id, record.id)))
    return found


def _status_and_version(record: Record, outgoing: dict[str, list[Link]]) -> list[Violation]:
    found = []
    kinds = Counter(link.kind for link in outgoing[record.id])
    status = record.status
    if status is not RecordStatus.SUPERSEDED and record.superseded_by is not None:
        found.append(_v("status_mismatch", f"record {record.id} is {status.value} but superseded by "
                        f"{record.superseded_by}", record))
    if status is RecordStatus.SUPERSEDED and record.superseded_by is None:
        found.append(_v("status_mismatch", f"record {record.id} is superseded by nothing", record))
    if status is RecordStatus.RETRACTED and not (kinds[LinkKind.RETRACT] or kinds[LinkKind.REVERT]):
        found.append(_v("missing_link", f"record {record.id} is retracted with no retract or revert link", record))
    if status is RecordStatus.EXPIRED and not kinds[LinkKind.EXPIRE]:
        found.append(_v("missing_link", f"record {record.id} is expired with no expire link", record))
    if (status is RecordStatus.ACTIVE) != (record.status_changed_at is None):
        found.append(_v("status_mismatch", f"record {record.id} is {status.value} but its status_changed_at "
                        f"is {record.status_changed_at}", record))
    # Every change bumps the version once: each confirmation, and the one change of status.
    expected = 1 + kinds[LinkKind.VERIFY] + (0 if status is RecordStatus.ACTIVE else 1)
    if record.version != expected:
        found.append(_v("version_mismatch", f"record {record.id} is at version {record.version}; its "
                        f"{kinds[LinkKind.VERIFY]} confirmation(s) and status {status.value} make it {expected}",
                        record))
    return found
