"""Opening stores: creation, migrations, and refusing corrupt or foreign databases."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from statewise.errors import SchemaVersionError, StoreCorruptError, StoreLockedError, StoreUnavailableError
from statewise.records import Provenance, RecordDraft
from statewise.store import open_store
from statewise.store.migrations import migrations_for
from statewise.store.postgres import PostgresStore, split_schema
from statewise.store.sqlite import SQLiteStore
from tests.conftest import drop_postgres_schema, fresh_postgres_dsn

DEV = Provenance(source="developer", authority="developer", actor="alice")


def test_open_store_picks_backend_from_location(tmp_path, monkeypatch):
    store = open_store(str(tmp_path / "a" / "store.db"))
    assert isinstance(store, SQLiteStore) and (tmp_path / "a" / "store.db").exists()
    store.close()
    store = open_store(f"sqlite://{tmp_path / 'b.db'}")
    assert isinstance(store, SQLiteStore)
    store.close()
    monkeypatch.setenv("STATEWISE_STORE", str(tmp_path / "env.db"))
    store = open_store()
    assert store.location == str(tmp_path / "env.db")
    store.close()


def test_sqlite_records_applied_migrations(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    assert store.schema_version() == len(migrations_for("sqlite"))
    store.close()
    # Reopening applies nothing twice.
    store = SQLiteStore(tmp_path / "s.db")
    assert store.schema_version() == len(migrations_for("sqlite"))
    store.close()


def test_corrupt_file_is_reported_and_left_untouched(tmp_path):
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not a database at all" * 10)
    before = path.read_bytes()
    with pytest.raises(StoreCorruptError) as info:
        SQLiteStore(path)
    assert "not an SQLite database" in str(info.value)
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_never_initialised(tmp_path):
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreCorruptError) as info:
        SQLiteStore(path)
    assert "users" in str(info.value)
    conn = sqlite3.connect(path)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert tables == {"users"}


def test_store_from_a_newer_statewise_is_refused(tmp_path):
    path = tmp_path / "s.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO sw_migrations VALUES (999, 'future', '2030-01-01T00:00:00Z')")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError):
        SQLiteStore(path)


def test_locked_sqlite_store_fails_with_a_clear_error(tmp_path):
    path = tmp_path / "s.db"
    store = SQLiteStore(path, timeout=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreLockedError):
            store.put(RecordDraft(key="a.b", value=True, value_type="bool", scope="global", provenance=DEV))
        SQLiteStore(path, timeout=0.2).close()  # an up-to-date store opens without the write lock
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.count() == 0
    store.close()


def test_split_schema_keeps_other_parameters():
    dsn, schema = split_schema("postgresql://u@h:5432/db?sslmode=disable&schema=team_a")
    assert schema == "team_a" and dsn == "postgresql://u@h:5432/db?sslmode=disable"
    assert split_schema("postgresql://u@h/db")[1] == "statewise"


def test_unreachable_postgres_is_a_store_error():
    with pytest.raises(StoreUnavailableError):
        PostgresStore("postgresql://nobody@127.0.0.1:1/nothing", connect_timeout=1)


def test_postgres_schema_with_foreign_tables_is_refused():
    dsn = fresh_postgres_dsn()
    conninfo, schema = split_schema(dsn)
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'CREATE TABLE "{schema}".orders (id int)')
    try:
        with pytest.raises(StoreCorruptError) as info:
            PostgresStore(dsn)
        assert "orders" in str(info.value)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_postgres_stores_opened_at_once_migrate_once():
    dsn = fresh_postgres_dsn()
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            PostgresStore(dsn).close()
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=open_and_close) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        assert errors == []
        store = PostgresStore(dsn)
        assert store.schema_version() == len(migrations_for("postgres"))
        store.close()
    finally:
        drop_postgres_schema(dsn)
