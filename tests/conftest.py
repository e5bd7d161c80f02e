"""Shared fixtures: real stores on both backends, and the built-in contract."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator

import pytest

from statewise.store.base import Store
from statewise.store.postgres import PostgresStore
from statewise.store.sqlite import SQLiteStore

POSTGRES_DSN_VARIABLE = "STATEWISE_TEST_POSTGRES_DSN"


@pytest.fixture(autouse=True, scope="session")
def _private_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The compiled-contract cache, the hook's observation index and its log go to a folder of
    the run's own (inherited by every subprocess a test starts), never the user's ~/.cache."""
    previous = os.environ.get("STATEWISE_CACHE_DIR")
    os.environ["STATEWISE_CACHE_DIR"] = str(tmp_path_factory.mktemp("statewise-cache"))
    yield
    if previous is None:
        os.environ.pop("STATEWISE_CACHE_DIR", None)
    else:
        os.environ["STATEWISE_CACHE_DIR"] = previous


@pytest.fixture(autouse=True, scope="session")
def _private_runtime_directory() -> Iterator[None]:
    """The hook's warm workers (statewise.integrations.warm) listen in a folder of the run's own,
    so a run never talks to the user's worker; removing it at the end makes each worker this
    run started exit within seconds. (Short: a Unix socket's path holds at most 107 bytes.)"""
    previous = os.environ.get("STATEWISE_RUNTIME_DIR")
    directory = tempfile.mkdtemp(prefix="sw-run-")
    os.environ["STATEWISE_RUNTIME_DIR"] = os.path.join(directory, "warm")
    yield
    shutil.rmtree(directory, ignore_errors=True)
    if previous is None:
        os.environ.pop("STATEWISE_RUNTIME_DIR", None)
    else:
        os.environ["STATEWISE_RUNTIME_DIR"] = previous


@pytest.fixture(autouse=True, scope="session")
def _no_outer_client_project() -> Iterator[None]:
    """A run started inside an agent client (Claude Code sets CLAUDE_PROJECT_DIR, Gemini CLI
    GEMINI_PROJECT_DIR) must not hand that client's project folder to the installed commands the
    tests run, which find their wrapper from it: a test sets the variable as a client would."""
    outer = {name: os.environ.pop(name) for name in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR") if name in os.environ}
    yield
    os.environ.update(outer)


def postgres_dsn() -> str | None:
    return os.environ.get(POSTGRES_DSN_VARIABLE) or None


def fresh_postgres_dsn() -> str:
    """A DSN naming a new, empty schema in the test database."""
    dsn = postgres_dsn()
    if dsn is None:
        pytest.skip(f"{POSTGRES_DSN_VARIABLE} is not set; PostgreSQL tests skipped")
    separator = "&" if "?" in dsn else "?"
    return f"{dsn}{separator}schema=sw_test_{uuid.uuid4().hex[:12]}"


def drop_postgres_schema(dsn: str) -> None:
    store = PostgresStore(dsn)
    try:
        store.drop()
    finally:
        store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store_location(backend: str, tmp_path) -> Iterator[str]:
    """Where a fresh store of the parametrized backend lives."""
    if backend == "sqlite":
        yield str(tmp_path / "store.db")
        return
    dsn = fresh_postgres_dsn()
    yield dsn
    drop_postgres_schema(dsn)


@pytest.fixture
def store(backend: str, store_location: str) -> Iterator[Store]:
    """A fresh, empty store on each backend."""
    opened: Store = SQLiteStore(store_location) if backend == "sqlite" else PostgresStore(store_location)
    try:
        yield opened
    finally:
        opened.close()
