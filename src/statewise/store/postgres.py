"""The PostgreSQL backend, for a team of agents sharing one store across machines.

The DSN is a libpq URL; an extra ``schema`` query parameter (default ``statewise``) names
the PostgreSQL schema that holds the tables, so several stores can share one database::

    postgresql://postgres@127.0.0.1:5432/test?schema=team_a
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb

try:
    from psycopg_pool import PoolTimeout
except ImportError:  # the pool is optional; without it PoolTimeout is never raised
    class PoolTimeout(Exception):  # type: ignore[no-redef]
        """Stands in for psycopg_pool.PoolTimeout when psycopg_pool is not installed."""

from statewise.errors import (
    MissingExtraError,
    SchemaVersionError,
    StoreCorruptError,
    StoreLockedError,
    StoreUnavailableError,
)
from statewise.records import KeySchema, utcnow
from statewise.store.columns import LINK_COLUMNS, RECORD_COLUMNS
from statewise.store.migrations import FORMAT_MARKER, migrations_for
from statewise.store.sql import SQLStore

if TYPE_CHECKING:  # the bulk module costs its import; the hook's store never imports
    from statewise.store.bulk import ImportBatch

__all__ = ["PostgresStore", "split_schema"]

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Any fixed number works; it only has to be the same for every StateWise process.
_MIGRATION_LOCK = 0x5357_0001
_COPY_RECORDS = f"COPY sw_records ({RECORD_COLUMNS}) FROM STDIN"
_COPY_LINKS = f"COPY sw_links ({LINK_COLUMNS}) FROM STDIN"
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def split_schema(dsn: str, default: str = "statewise") -> tuple[str, str]:
    """Remove the ``schema`` query parameter from a DSN; return (dsn, schema)."""
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = default
    kept = []
    for name, value in query:
        if name == "schema":
            schema = value
        else:
            kept.append((name, value))
    return urlunsplit(parts._replace(query=urlencode(kept))), schema


def _redact(dsn: str) -> str:
    return re.sub(r"//([^:@/]+):[^@/]*@", r"//\1:***@", dsn)


class PostgresStore(SQLStore):
    """A store in a PostgreSQL schema.

    ``lock_timeout`` bounds how long a writer waits for a row lock and ``statement_timeout``
    how long any one statement may run (both in seconds; the server cancels past them, and
    the store says StoreLockedError or StoreUnavailableError, never a silent wait).
    ``pool_size`` > 0 keeps a ``psycopg_pool`` connection pool of at most that many
    connections instead of one connection: for long-lived processes (the MCP server) whose
    threads share the store, and that must survive a server restart. ``check_integrity=False``
    opens a tampered store (see SQLiteStore).
    """

    def __init__(self, dsn: str, *, key_schema: KeySchema | None = None, lock_timeout: float = 10.0,
                 connect_timeout: float = 5.0, check_integrity: bool = True,
                 statement_timeout: float = 30.0, pool_size: int = 0) -> None:
        super().__init__()
        conninfo, schema = split_schema(dsn)
        self.location = _redact(dsn)
        self.key_schema = key_schema
        if not _SCHEMA_NAME.match(schema):
            raise StoreUnavailableError(self.location, f"schema name {schema!r} must be lower-case letters, digits, _")
        self.schema = schema
        self._local = threading.local()
        self._pool: Any = None
        # Every connection, pooled or not, starts with these bounds and the store's schema. Its
        # statements are index lookups whatever their parameters, so a prepared statement keeps
        # its generic plan: planning a retrieval again on every call costs more than running it.
        options = (f"-c lock_timeout={int(lock_timeout * 1000)} -c statement_timeout={int(statement_timeout * 1000)} "
                   f"-c idle_in_transaction_session_timeout={int(max(statement_timeout, lock_timeout) * 2000)} "
                   f"-c search_path={schema} -c plan_cache_mode=force_generic_plan")
        settings: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, int(connect_timeout)), "options": options}
        try:
            if pool_size > 0:
                try:
                    from psycopg_pool import ConnectionPool
                except ImportError:
                    raise MissingExtraError("a PostgreSQL connection pool", "psycopg_pool") from None
                # check: a connection the server dropped (restart, idle timeout) is replaced
                # before use instead of failing the call that drew it.
                self._pool = ConnectionPool(conninfo, kwargs=settings, min_size=1, max_size=pool_size,
                                            timeout=connect_timeout, open=False, name=f"statewise-{schema}",
                                            check=ConnectionPool.check_connection)
                self._pool.open(wait=True, timeout=connect_timeout)
                self._conn = None
            else:
                self._conn = psycopg.connect(conninfo, **settings)
        except (psycopg.OperationalError, PoolTimeout) as error:
            if self._pool is not None:
                self._pool.close()
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else "connection failed"
            raise StoreUnavailableError(self.location, f"cannot connect: {first_line}") from None
        try:
            with self._connection():
                self._migrate()
                if check_integrity:
                    self._check_integrity_on_open()
        except BaseException:
            self.close()
            raise

    @property
    def pooled(self) -> bool:
        """True when this store uses a connection pool."""
        return self._pool is not None

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """The connection this thread uses now: the store's own, or one held from the pool
        for the outermost operation (nested calls reuse it)."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        if self._pool is None:
            self._local.conn = self._conn
            try:
                yield self._conn
            finally:
                self._local.conn = None
            return
        try:
            with self._pool.connection() as conn:
                self._local.conn = conn
                try:
                    yield conn
                finally:
                    self._local.conn = None
        except PoolTimeout:
            raise StoreUnavailableError(self.location, "no pooled connection became free in time") from None

    def _migrate(self) -> None:
        conn = self._local.conn
        with conn.transaction():
            # Serialises first-time initialisation when several processes open at once.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            tables = {
                row[0]
                for row in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (self.schema,)
                )
            }
            if tables and "sw_meta" not in tables:
                raise StoreCorruptError(
                    self.location,
                    f"schema {self.schema} holds tables that are not a StateWise store ("
                    + ", ".join(sorted(tables)[:5]) + "); refusing to initialise it",
                )
            if not tables:
                conn.execute("CREATE TABLE sw_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute(
                    "CREATE TABLE sw_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                    "applied_at TIMESTAMPTZ NOT NULL)"
                )
                conn.execute("INSERT INTO sw_meta VALUES ('format', %s)", (FORMAT_MARKER,))
            marker = conn.execute("SELECT value FROM sw_meta WHERE name = 'format'").fetchone()
            if marker is None or marker[0] != FORMAT_MARKER:
                raise StoreCorruptError(self.location, "its sw_meta table does not mark it as a StateWise store")
            applied = {row[0] for row in conn.execute("SELECT version FROM sw_migrations")}
            known = migrations_for("postgres")
            if applied and max(applied) > len(known):
                raise SchemaVersionError(
                    self.location,
                    f"schema version {max(applied)} is newer than this StateWise knows ({len(known)}); upgrade StateWise",
                )
            for migration in known:
                if migration.number not in applied:
                    conn.execute(migration.sql)
                    conn.execute(
                        "INSERT INTO sw_migrations VALUES (%s, %s, %s)",
                        (migration.number, migration.name, utcnow()),
                    )

    def _one_active_index_definition(self) -> str | None:
        with self._connection() as conn:
            row = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
                (self.schema, self.ONE_ACTIVE_INDEX),
            ).fetchone()
        return row[0] if row else None

    def schema_version(self) -> int:
        with self._connection() as conn:
            return int(conn.execute("SELECT MAX(version) FROM sw_migrations").fetchone()[0])

    def drop(self) -> None:
        """Delete this store's schema and everything in it (used by tests and benchmarks)."""
        with self._connection() as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')

    @contextmanager
    def _write(self) -> Iterator[Any]:
        try:
            with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
                yield cur
        except pg_errors.LockNotAvailable:
            raise StoreLockedError(self.location, "another writer held the lock past the timeout") from None
        except pg_errors.QueryCanceled:
            raise StoreUnavailableError(self.location, "a statement ran past the statement timeout") from None
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(self.location, str(error).strip().splitlines()[0]) from None

    @contextmanager
    def _read(self) -> Iterator[Any]:
        try:
            with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
                yield cur
        except pg_errors.QueryCanceled:
            raise StoreUnavailableError(self.location, "a statement ran past the statement timeout") from None
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(self.location, str(error).strip().splitlines()[0]) from None

    @contextmanager
    def _read_one(self) -> Iterator[Any]:
        # The connection is in autocommit mode: one statement sees one snapshot by itself, and
        # skipping BEGIN and COMMIT saves two of a retrieval's three round trips.
        try:
            with self._connection() as conn, conn.cursor() as cur:
                yield cur
        except pg_errors.QueryCanceled:
            raise StoreUnavailableError(self.location, "a statement ran past the statement timeout") from None
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(self.location, str(error).strip().splitlines()[0]) from None

    _lock_suffix = " FOR UPDATE"

    def _statement_guard(self) -> Any:
        return self._local.conn.transaction()  # a savepoint inside the outer transaction

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    def _encode_time(self, value: datetime | None) -> Any:
        return value

    def _decode_time(self, value: Any) -> datetime | None:
        return cast("datetime | None", value)  # psycopg reads timestamptz as datetime

    def _decode_present_time(self, value: Any) -> datetime:
        return cast(datetime, value)

    def _encode_json(self, value: Any) -> Any:
        return Jsonb(value)

    def _decode_json(self, value: Any) -> Any:
        return value

    def _is_unique_violation(self, error: BaseException) -> bool:
        return isinstance(error, pg_errors.UniqueViolation)

    def _bulk_json(self, value: Any) -> Any:
        # COPY takes the JSON text itself; no Jsonb wrapper per value.
        return _dumps(value)

    def _bulk_insert(self, cur: Any, batch: ImportBatch) -> None:
        # COPY streams a batch's rows in one command, several times faster than executemany's
        # one INSERT per row; the constraints (unique ids, one active record per key and
        # scope) are checked as rows arrive, and a violation fails the whole COPY.
        for rows, statement in ((batch.record_rows, _COPY_RECORDS), (batch.link_rows, _COPY_LINKS)):
            if rows:
                with cur.copy(statement) as copy:
                    write = copy.write_row
                    for row in rows:
                        write(row)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        elif self._conn is not None and not self._conn.closed:
            self._conn.close()
