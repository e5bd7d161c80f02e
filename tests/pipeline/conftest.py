"""Fixtures of the pipeline tests: a real git sandbox with a protected origin and a SQLite store
with the built-in contract's keys (the store itself is tested on both backends in tests/store)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from statewise.contract import builtin_contract
from statewise.sandbox import GitSandbox, make_git_sandbox
from statewise.store.sqlite import SQLiteStore


@pytest.fixture
def sandbox(tmp_path) -> GitSandbox:
    return make_git_sandbox(tmp_path / "sandbox")


@pytest.fixture
def store(tmp_path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "store.db", key_schema=builtin_contract())
    yield opened
    opened.close()
