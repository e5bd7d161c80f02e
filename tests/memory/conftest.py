"""Fixtures for the memory tests: a real git repository with a bare origin, a package.json
with scripts, a Makefile, a private home directory, and a real SQLite store."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from statewise.contract import Contract, builtin_contract
from statewise.store import open_store
from statewise.store.base import Store
from tests.verifiers.helpers import Repo, git, make_repo

AGENTS_MD = """# Project notes

This project uses Python 3.8.
The tests run with `npm run test:unit`.
Sources live in `src/app/` and `src/legacy/`.
Never push directly to `main`.

## Build

```bash
make build
```

Be kind to reviewers.
"""


@pytest.fixture
def contract() -> Contract:
    return builtin_contract()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private home directory, so the developer's real ~/.claude never leaks into a test."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME",)}
    environ["HOME"] = str(home)
    return environ


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    """A repository with package.json scripts test and lint, a Makefile (build, test), src/app/
    and a committed AGENTS.md with one valid and several stale lines."""
    repo = make_repo(tmp_path / "project")
    work = repo.work
    (work / "package.json").write_text(json.dumps({"name": "demo", "scripts": {"test": "node t.js", "lint": "eslint ."}}))
    (work / "Makefile").write_text("build:\n\techo build\ntest: build\n\techo test\n")
    (work / "src" / "app").mkdir(parents=True)
    (work / "src" / "app" / "main.py").write_text("print('hi')\n")
    (work / "AGENTS.md").write_text(AGENTS_MD)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "project files")
    return repo


@pytest.fixture
def store(tmp_path: Path, contract: Contract) -> Iterator[Store]:
    opened = open_store(str(tmp_path / "store.db"), key_schema=contract)
    try:
        yield opened
    finally:
        opened.close()
