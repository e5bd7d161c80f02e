"""The contract tests' shared fixture."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> Path:
    """Every test gets its own compiled-contract cache directory (never the user's)."""
    folder = tmp_path / "statewise-cache"
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(folder))
    monkeypatch.delenv("STATEWISE_NO_CACHE", raising=False)
    return folder
