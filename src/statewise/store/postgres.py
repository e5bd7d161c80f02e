"""The PostgreSQL backend, for a team of agents sharing one store across machines.

The DSN is a libpq URL; an extra ``schema`` query parameter (default ``statewise``) names
the PostgreSQL schema that holds the tables, so several stores can share one database::

    postgresql://postgres@127.0.0.1:5432/test?schema=team_a
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb

from statewise.errors import SchemaVersionError, StoreCorruptError, StoreLockedError, StoreUnavailableError
from statewise.records import KeySchema, utcnow
from statewise.store.migrations import FORMAT_MARKER, migrations_for
from statewise.store.sql import SQLStore

__all__ = ["PostgresStore", "split_schema"]

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Any fixed number works; it only has to be the same for every StateWise process.
_MIGRATION_LOCK = 0x5357_0001


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
    """A store in a PostgreSQL schema. ``lock_timeout`` bounds how long a writer waits;
    ``check_integrity=False`` opens a tampered store (see SQLiteStore)."""

    def __init__(self, dsn: str, *, key_schema: KeySchema | None = None, lock_timeout: float = 10.0,
                 connect_timeout: float = 5.0, check_integrity: bool = True) -> None:
        super().__init__()
        conninfo, schema = split_schema(dsn)
        self.location = _redact(dsn)
        self.key_schema = key_schema
        if not _SCHEMA_NAME.match(schema):
            raise StoreUnavailableError(self.location, f"schema name {schema!r} must be lower-case letters, digits, _")
        self.schema = schema
        try:
            self._conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=max(1, int(connect_timeout)))
        except psycopg.OperationalError as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else "connection failed"
            raise StoreUnavailableError(self.location, f"cannot connect: {first_line}") from None
        self._conn.execute(f"SET lock_timeout = '{int(lock_timeout * 1000)}ms'")
        try:
            self._migrate()
            if check_integrity:
                self._check_integrity_on_open()
        except BaseException:
            self._conn.close()
            raise

    def _migrate(self) -> None:
        conn = self._conn
        with conn.transaction():
            # Serialises first-time initialisation when several processes open at once.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            conn.execute(f'SET search_path TO "{self.schema}"')
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
        row = self._conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
            (self.schema, self.ONE_ACTIVE_INDEX),
        ).fetchone()
        return row[0] if row else None

    def schema_version(self) -> int:
        return int(self._conn.execute("SELECT MAX(version) FROM sw_migrations").fetchone()[0])

    def drop(self) -> None:
        """Delete this store's schema and everything in it (used by tests and benchmarks)."""
        self._conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')

    @contextmanager
    def _write(self) -> Iterator[Any]:
        try:
            with self._conn.transaction():
                with self._conn.cursor() as cur:
                    yield cur
        except pg_errors.LockNotAvailable:
            raise StoreLockedError(self.location, "another writer held the lock past the timeout") from None
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(self.location, str(error).strip().splitlines()[0]) from None

    @contextmanager
    def _read(self) -> Iterator[Any]:
        try:
            with self._conn.transaction():
                with self._conn.cursor() as cur:
                    yield cur
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(self.location, str(error).strip().splitlines()[0]) from None

    _lock_suffix = " FOR UPDATE"

    def _statement_guard(self) -> Any:
        return self._conn.transaction()  # a savepoint inside the outer transaction

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    def _encode_time(self, value: datetime | None) -> Any:
        return value

    def _decode_time(self, value: Any) -> datetime | None:
        return value

    def _encode_json(self, value: Any) -> Any:
        return Jsonb(value)

    def _decode_json(self, value: Any) -> Any:
        return value

    def _is_unique_violation(self, error: BaseException) -> bool:
        return isinstance(error, pg_errors.UniqueViolation)

    def close(self) -> None:
        if not self._conn.closed:
            self._conn.close()
