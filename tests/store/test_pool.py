"""PostgreSQL for long-lived processes: a connection pool and bounded statement times."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from statewise.errors import StoreUnavailableError
from statewise.records import Provenance, RecordDraft
from statewise.scopes import TaskScope
from statewise.store import LONG_LIVED_POOL_SIZE, open_store
from statewise.store.postgres import PostgresStore, split_schema
from tests.conftest import drop_postgres_schema, fresh_postgres_dsn

DEV = Provenance(source="developer", authority="developer", actor="alice")


@pytest.fixture
def dsn():
    location = fresh_postgres_dsn()
    yield location
    drop_postgres_schema(location)


def test_a_long_lived_store_is_pooled_and_serves_many_threads(dsn):
    store = open_store(dsn, long_lived=True)
    try:
        assert store.pooled
        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(10):
                    scope = f"repo:github.com/acme/app{n}@b{i}"
                    store.put(RecordDraft(key="project.test_command", value=f"t{n}.{i}", value_type="string",
                                          scope=scope, provenance=DEV))
                    task = TaskScope(repo=f"github.com/acme/app{n}", branch=f"b{i}")
                    assert store.retrieve(task).get("project.test_command").value == f"t{n}.{i}"
            except BaseException as error:  # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.count() == 120
        assert store._pool.get_stats()["pool_size"] <= LONG_LIVED_POOL_SIZE
    finally:
        store.close()
    plain = open_store(dsn)
    try:
        assert not plain.pooled
    finally:
        plain.close()


def test_a_pooled_store_replaces_a_connection_the_server_dropped(dsn):
    store = PostgresStore(dsn, pool_size=2)
    try:
        store.put(RecordDraft(key="project.test_command", value="tox", value_type="string", scope="global",
                              provenance=DEV))
        with store._connection() as conn:  # the pool has one idle connection: this one
            pid = conn.info.backend_pid
        with psycopg.connect(split_schema(dsn)[0], autocommit=True) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
        assert store.count() == 1  # answered on a fresh connection
    finally:
        store.close()


def test_a_statement_past_the_statement_timeout_is_cancelled_and_named(dsn):
    for pool_size in (0, 2):
        store = PostgresStore(dsn, statement_timeout=0.3, pool_size=pool_size)
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="statement timeout"):
                with store._read() as cur:
                    cur.execute("SELECT pg_sleep(5)")
            assert time.monotonic() - started < 3
            assert store.count() == 0  # the store still works after the cancel
        finally:
            store.close()
