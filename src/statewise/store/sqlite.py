"""The embedded default backend: one SQLite file in WAL mode."""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.errors import (
    ActiveRecordExistsError,
    ImportFormatError,
    SchemaVersionError,
    StoreCorruptError,
    StoreLockedError,
    StoreUnavailableError,
)
from statewise.store.migrations import FORMAT_MARKER, migrations_for
from statewise.store.sql import SQLStore

if TYPE_CHECKING:  # the bulk module costs its import; the hook's store never imports
    from statewise.records import KeySchema
    from statewise.store.bulk import ImportBatch

__all__ = ["SQLiteStore"]

_HEADER = b"SQLite format 3\x00"


_JSON_LITERALS = {"true": True, "false": False, "null": None}
_encode_string = json.encoder.encode_basestring_ascii
_encode_other = json.JSONEncoder(separators=(",", ":"), sort_keys=True).encode
_from_iso = datetime.fromisoformat


def _decode_value(text: str) -> Any:
    """``json.loads`` for a stored value, with the common shapes (a plain string, a boolean)
    read directly: most values are one of them, and this runs for every row read."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and '"' not in text[1:-1]:
        return text[1:-1]
    literal = _JSON_LITERALS.get(text, _JSON_LITERALS)
    return json.loads(text) if literal is _JSON_LITERALS else literal



class SQLiteStore(SQLStore):
    """A store in one SQLite file. ``timeout`` is how long a writer waits for the lock.

    ``check_integrity=False`` opens a store even when its one-active index was tampered with
    (``statewise store check`` does, to report every problem); everything else leaves it on.
    """

    #: How much of the file reads may map (SQLite caps it at its own build limit, 2 GiB by default).
    MMAP_BYTES = 2**30

    def __init__(self, path: str | Path, *, key_schema: KeySchema | None = None, timeout: float = 10.0,
                 check_integrity: bool = True) -> None:
        super().__init__()
        self.path = Path(path)
        self.location = str(self.path)
        self.key_schema = key_schema
        if self.path.exists() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as handle:
                if handle.read(len(_HEADER)) != _HEADER:
                    raise StoreCorruptError(self.location, "not an SQLite database (corrupt or foreign file); left untouched")
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreUnavailableError(self.location, f"cannot create its folder: {error}") from None
        try:
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL keeps the database consistent when a process dies; WAL makes it so.
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            # Reads map the file instead of copying each page with a system call: a retrieval
            # reads a few hundred scattered pages of a large store, and the copies were a
            # quarter of its SQL time. Writes still go through the WAL as before.
            self._conn.execute(f"PRAGMA mmap_size = {self.MMAP_BYTES}")
            self._migrate()
            if check_integrity:
                self._check_integrity_on_open()
        except StoreCorruptError:
            self._close_quietly()
            raise
        except sqlite3.DatabaseError as error:
            self._close_quietly()
            if "locked" in str(error):
                raise StoreLockedError(self.location, "locked by another process") from None
            raise StoreCorruptError(self.location, f"cannot be read as a StateWise store: {error}") from None

    # --- schema -----------------------------------------------------------------------

    def _is_current(self) -> bool:
        """A lock-free check that the schema is already up to date (the common case)."""
        conn = self._conn
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"sw_meta", "sw_migrations"} <= tables:
            return False
        marker = conn.execute("SELECT value FROM sw_meta WHERE name = 'format'").fetchone()
        applied = {row[0] for row in conn.execute("SELECT version FROM sw_migrations")}
        return marker is not None and marker[0] == FORMAT_MARKER and applied == set(
            range(1, len(migrations_for("sqlite")) + 1)
        )

    def _migrate(self) -> None:
        # Opening must not wait for another process's write when there is nothing to do.
        if self._is_current():
            return
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            tables.discard("sqlite_sequence")
            if tables and "sw_meta" not in tables:
                raise StoreCorruptError(
                    self.location,
                    "holds tables that are not a StateWise store (" + ", ".join(sorted(tables)[:5])
                    + "); refusing to initialise it",
                )
            if not tables:
                conn.execute("CREATE TABLE sw_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute(
                    "CREATE TABLE sw_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
                )
                conn.execute("INSERT INTO sw_meta VALUES ('format', ?)", (FORMAT_MARKER,))
            marker = conn.execute("SELECT value FROM sw_meta WHERE name = 'format'").fetchone()
            if marker is None or marker[0] != FORMAT_MARKER:
                raise StoreCorruptError(self.location, "its sw_meta table does not mark it as a StateWise store")
            applied = {row[0] for row in conn.execute("SELECT version FROM sw_migrations")}
            known = migrations_for("sqlite")
            if applied and max(applied) > len(known):
                raise SchemaVersionError(
                    self.location,
                    f"schema version {max(applied)} is newer than this StateWise knows ({len(known)}); upgrade StateWise",
                )
            for migration in known:
                if migration.number in applied:
                    continue
                for statement in _statements(migration.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO sw_migrations VALUES (?, ?, ?)",
                    (migration.number, migration.name, self._encode_time(datetime.now(UTC))),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _one_active_index_definition(self) -> str | None:
        row = self._conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (self.ONE_ACTIVE_INDEX,)
        ).fetchone()
        return row[0] if row and row[0] else None

    def schema_version(self) -> int:
        return int(self._conn.execute("SELECT MAX(version) FROM sw_migrations").fetchone()[0])

    # --- hooks ------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Any]:
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise StoreLockedError(self.location, "another writer held the lock past the timeout") from None
            raise
        cur = self._conn.cursor()
        try:
            yield cur
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        finally:
            cur.close()

    @contextmanager
    def _read(self) -> Iterator[Any]:
        cur = self._conn.cursor()
        try:
            # One read transaction, so multi-statement reads see a single snapshot in WAL mode.
            self._conn.execute("BEGIN")
            yield cur
        finally:
            self._conn.execute("COMMIT")
            cur.close()

    # SQLStore reads one statement through _one_row and _all_rows (its _read_one serves only
    # them): here they need no cursor of their own.
    def _one_row(self, statement: str, params: Sequence[Any]) -> Any:
        # In autocommit mode one statement is its own read transaction; the connection's
        # execute makes and drops its cursor in C (no context manager per read).
        return self._conn.execute(statement, params).fetchone()

    def _all_rows(self, statement: str, params: Sequence[Any]) -> list[Any]:
        return self._conn.execute(statement, params).fetchall()

    def _sql(self, statement: str) -> str:
        return statement

    #: Page cache for a bulk import, in KiB (64 MiB): the id index of a million records fits, so
    #: inserting in random key order does not thrash; it is returned to the default after.
    BULK_CACHE_KIB = 65_536

    #: An import that has written this many records, more than the store held before it,
    #: drops the secondary indexes and builds them again at the end, inside the same
    #: transaction: building an index by sorting is several times cheaper than keeping
    #: it up to date one random insert at a time.
    BULK_REINDEX_AFTER = 50_000

    def _begin_bulk(self, cur: Any) -> None:
        self._cache_before = cur.execute("PRAGMA cache_size").fetchone()[0]
        cur.execute(f"PRAGMA cache_size = -{self.BULK_CACHE_KIB}")
        self._bulk_existing = cur.execute("SELECT COUNT(*) FROM sw_records").fetchone()[0]
        self._bulk_written = 0
        self._bulk_dropped: list[tuple[str, str]] = []
        self._bulk_lines: array[int] = array("I")
        self._bulk_from_seq = 0
        if self._bulk_existing == 0:
            # An empty store: building the indexes once at the end is never the slower way.
            self._drop_bulk_indexes(cur)

    def _drop_bulk_indexes(self, cur: Any) -> None:
        # The rows written from here on get the seqs after AUTOINCREMENT's high-water mark,
        # which a store emptied by a restore keeps above its (absent) largest seq.
        row = cur.execute("SELECT seq FROM sqlite_sequence WHERE name = 'sw_records'").fetchone()
        self._bulk_from_seq = max(self._max_seq(cur), int(row[0]) if row else 0)
        self._bulk_dropped = [
            (name, sql) for name, sql in cur.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sw_records' "
                "AND sql IS NOT NULL ORDER BY name"
            ).fetchall()
        ]
        for name, _ in self._bulk_dropped:
            cur.execute(f'DROP INDEX "{name}"')

    def _bulk_progress(self, cur: Any, batch: ImportBatch, start_seq: int) -> None:
        self._bulk_written += len(batch.record_rows)
        if self._bulk_dropped:
            # Line numbers of the records written without the one-active index, to name the
            # line if building it again finds two active records for one key and scope.
            self._bulk_lines.extend(batch.record_lines)
            return
        if self._bulk_written >= self.BULK_REINDEX_AFTER and self._bulk_written > self._bulk_existing:
            self._drop_bulk_indexes(cur)

    def _end_bulk(self, cur: Any, source: str) -> None:
        try:
            for name, sql in self._bulk_dropped:
                try:
                    cur.execute(sql)
                except sqlite3.IntegrityError:
                    if name != self.ONE_ACTIVE_INDEX:
                        raise
                    self._raise_bulk_duplicate(cur, source)
        finally:
            self._bulk_dropped = []
            self._bulk_lines = array("I")
            cur.execute(f"PRAGMA cache_size = {int(self._cache_before)}")

    def _raise_bulk_duplicate(self, cur: Any, source: str) -> None:
        """Name the first imported line that made a second active record for a key and scope."""
        row = cur.execute(
            "SELECT MIN(later.seq), later.key, later.scope, earlier.id FROM sw_records AS later "
            "JOIN sw_records AS earlier ON earlier.key = later.key AND earlier.scope = later.scope "
            "AND earlier.status = 'active' AND earlier.seq < later.seq "
            "WHERE later.status = 'active' AND later.seq > ?",
            (self._bulk_from_seq,),
        ).fetchone()
        seq, key, scope, existing = row
        line = self._bulk_lines[seq - self._bulk_from_seq - 1]
        raise ImportFormatError(source, line, str(ActiveRecordExistsError(key, scope, existing)))

    def _encode_time(self, value: datetime | None) -> Any:
        if value is None:
            return None
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def _decode_time(self, value: Any) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)

    _decode_present_time = staticmethod(datetime.fromisoformat)  # type: ignore[assignment]

    def _decoded(self, row: Sequence[Any]) -> tuple[Any, ...]:
        # SQLStore._decoded with this backend's decoders called directly (module functions,
        # not methods): it runs once per row read.
        (rid, key, scope, value_type, value_json, status, observed_at, recorded_at, verified_at,
         ttl, source, authority, actor, reference, supersedes, superseded_by, version,
         status_reason, status_changed_at) = row
        return (
            rid, key, scope, value_type, _decode_value(value_json), status, _from_iso(observed_at),
            _from_iso(recorded_at), None if verified_at is None else _from_iso(verified_at), ttl,
            source, authority, actor, reference, supersedes, superseded_by, version, status_reason,
            None if status_changed_at is None else _from_iso(status_changed_at),
        )

    def _encode_json(self, value: Any) -> Any:
        # Strings and booleans are most values; these give what json.dumps would, faster.
        kind = type(value)
        if kind is str:
            return _encode_string(value)
        if kind is bool:
            return "true" if value else "false"
        return _encode_other(value)

    def _decode_json(self, value: Any) -> Any:
        return _decode_value(value)

    def _is_unique_violation(self, error: BaseException) -> bool:
        return isinstance(error, sqlite3.IntegrityError) and "UNIQUE" in str(error)

    def _close_quietly(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        self._close_quietly()
        self._conn = None  # type: ignore[assignment]


def _statements(script: str) -> list[str]:
    """Split a migration into statements (migrations contain no ';' inside literals)."""
    without_comments = "\n".join(line for line in script.splitlines() if not line.strip().startswith("--"))
    return [part.strip() for part in without_comments.split(";") if part.strip()]
