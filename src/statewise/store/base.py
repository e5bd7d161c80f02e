"""The store interface: the persistent memory M_i that StateWise reads and repairs.

Every backend keeps these invariants (the conformance suite in ``tests/store`` checks each):

* at most one active record per (key, scope);
* a supersession, narrowing, revert or retraction is all or nothing;
* no old value is ever lost: records are never updated in a way that changes their value,
  only their status, ``verified_at`` and ``version``;
* a correction touches only the scope its evidence establishes;
* the history of a (key, scope) is complete and ordered.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from statewise.store.rows import RecordRow, RetrievalRows

if TYPE_CHECKING:  # annotations only: a reader of rows never imports the models (pydantic)
    from statewise.records import (
        Evidence,
        KeySchema,
        Lineage,
        Link,
        Record,
        RecordDraft,
        Retrieval,
        Supersession,
    )
    from statewise.scopes import TaskScope

__all__ = ["Store"]


class Store(ABC):
    """A persistent record store. Use :func:`statewise.store.open_store` to get one."""

    #: The key schema (usually the contract) that ``put`` checks keys and types against.
    key_schema: KeySchema | None = None

    #: A human description of where the store lives, for messages.
    location: str = ""

    # --- writing ----------------------------------------------------------------------

    @abstractmethod
    def put(self, draft: RecordDraft, *, replace: bool = False, reason: str = "") -> Record:
        """Add a record. If (key, scope) already has an active record, raise
        ActiveRecordExistsError, or with ``replace`` supersede it, using the draft's
        provenance as the evidence."""

    @abstractmethod
    def supersede(
        self, record_id: str, evidence: Evidence, *, expected_version: int, reason: str = ""
    ) -> Supersession:
        """Correct a record with typed evidence, atomically, within the evidence's scope.

        When the evidence's scope is the record's scope (or contains it), the record is
        superseded in place. When it is strictly narrower, the record is *narrowed*: a new
        record holds the corrected value in the narrower scope, and the old record stays
        active everywhere else. Raises GroundingError if the evidence is for another key,
        type or an unrelated scope, and StaleVersionError if the record changed since
        ``expected_version`` was read.
        """

    @abstractmethod
    def confirm(self, record_id: str, evidence: Evidence, *, expected_version: int) -> Record:
        """Record that evidence confirmed a record's value: refresh ``verified_at`` only."""

    @abstractmethod
    def retract(self, record_id: str, *, reason: str, actor: str) -> Record:
        """Withdraw an active record (a person said "forget this")."""

    @abstractmethod
    def revert(self, record_id: str, *, reason: str, actor: str) -> Record | None:
        """Undo the repair that produced ``record_id`` because its evidence was withdrawn.

        The value it replaced becomes active again as a new record linked by a ``revert``
        link, and that new record is returned. A narrowing that replaced nothing is undone
        by retracting the narrow record, and None is returned (the general record applies
        again).
        """

    @abstractmethod
    def expire_lapsed(self, now: datetime | None = None) -> list[Record]:
        """Mark active records whose TTL lapsed without re-verification as expired."""

    # --- reading ----------------------------------------------------------------------

    @abstractmethod
    def get(self, record_id: str) -> Record:
        """The record with this id, whatever its status (RecordNotFoundError if none)."""

    def get_row(self, record_id: str) -> RecordRow:
        """:meth:`get` as a plain :class:`~statewise.store.rows.RecordRow`, without building
        the model (the SQL backends read the row directly)."""
        return RecordRow.from_record(self.get(record_id))

    @abstractmethod
    def get_active(self, key: str, scope: str) -> Record | None:
        """The active record for exactly (key, scope), or None."""

    @abstractmethod
    def retrieve(
        self,
        task: TaskScope,
        *,
        keys: Sequence[str] | None = None,
        text: str | None = None,
        now: datetime | None = None,
        near_miss_limit: int = 20,
    ) -> Retrieval:
        """The records that apply to a task, most specific per key, with held-back ones apart.

        ``keys`` limits the result to those keys (a base key such as
        ``python.package_version`` also matches its qualified forms); ``text`` keeps records
        whose key or value contains it (case-insensitive).
        """

    def retrieve_rows(
        self,
        task: TaskScope,
        *,
        keys: Sequence[str] | None = None,
        text: str | None = None,
        now: datetime | None = None,
        near_miss_limit: int = 20,
    ) -> RetrievalRows:
        """:meth:`retrieve` as plain rows (:class:`~statewise.store.rows.RetrievalRows`), the
        same records in the same order, without a model per row (the SQL backends build
        ``retrieve``'s models from these rows)."""
        return RetrievalRows.from_retrieval(
            self.retrieve(task, keys=keys, text=text, now=now, near_miss_limit=near_miss_limit))

    @abstractmethod
    def history(self, key: str, scope: str) -> list[Record]:
        """Every record ever stored for exactly (key, scope), oldest first."""

    @abstractmethod
    def lineage(self, record_id: str) -> Lineage:
        """The records and links connected to ``record_id`` by repairs, oldest first."""

    @abstractmethod
    def links(self, record_id: str) -> list[Link]:
        """Every link from or to ``record_id``, oldest first."""

    @abstractmethod
    def records(self) -> Iterable[Record]:
        """Every record in insertion order (for export and inspection)."""

    @abstractmethod
    def all_links(self) -> Iterable[Link]:
        """Every link in insertion order."""

    @abstractmethod
    def count(self, *, status: str | None = None) -> int:
        """How many records there are (with that status)."""

    # --- moving data ------------------------------------------------------------------

    @abstractmethod
    def export_jsonl(self, out: IO[str]) -> int:
        """Write every record and link as JSON Lines; return the number of lines."""

    @abstractmethod
    def import_jsonl(self, lines: Iterable[str], *, source: str = "<input>",
                     progress: Callable[[int, int], None] | None = None) -> int:
        """Import JSON Lines written by ``export_jsonl``, all or nothing; return the number
        of records and links imported.

        ``lines`` is read lazily, so an open file streams with bounded memory. Every line is
        validated as ``put`` would (key names, canonical scopes, typed values against the key
        schema, provenance) and keeps its lineage (ids, statuses, links). A malformed line
        raises ImportFormatError naming the line, and nothing from that import is written.
        ``progress``, if given, is called now and then with (lines read, characters read).
        """

    @abstractmethod
    def snapshot(self, path: str | Path) -> None:
        """Save the whole store to ``path``."""

    @abstractmethod
    def restore(self, path: str | Path) -> None:
        """Replace the whole store's content with a snapshot, atomically."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
