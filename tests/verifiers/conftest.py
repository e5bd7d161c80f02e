"""Fixtures for the verifier tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.verifiers.helpers import Repo, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A working tree (main checked out, feature pushed) with a bare local origin."""
    return make_repo(tmp_path / "repo")


@pytest.fixture(autouse=True)
def _fresh_negative_cache():
    """Each test starts with no cached hosted-API failures (the cache is process-wide)."""
    from statewise.verifiers.protection import _GH_TOKENS, NEGATIVE_CACHE

    NEGATIVE_CACHE.clear()
    _GH_TOKENS.clear()
    yield
    NEGATIVE_CACHE.clear()
    _GH_TOKENS.clear()
