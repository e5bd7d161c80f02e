"""Fixtures for the real-client tests: the pinned clients (installed once into a cache) and a
fresh workspace per test (repository, protected bare origin, store, private HOME)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import git, make_git_sandbox
from statewise.store.sqlite import SQLiteStore
from tests.e2e.clients import PINS, InstallProblem, Workspace, cache_dir, clients_cached, installed_clients

#: The file the developer declared protected (fs.protected_paths).
PROTECTED_FILE = "config/prod.yaml"
PROTECTED_TEXT = "database: production\nreplicas: 3\n"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def client_bin(request: pytest.FixtureRequest) -> Path:
    """node_modules/.bin with the pinned clients. Outside CI they are installed only when asked
    (STATEWISE_E2E=1: the download is about 760 MB) or already cached, and skipped, saying why,
    when node or npm is missing; in CI (CI=true) they are always installed and every install
    problem is a failure. A run that downloads says what and where, on the terminal."""
    asked = os.environ.get("STATEWISE_E2E", "").strip().lower() in ("1", "true", "yes")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if (_in_ci() or asked) and not clients_cached() and reporter is not None and capture is not None:
        pinned = ", ".join(f"{package}@{version}" for package, version in PINS.items())
        with capture.global_and_fixture_disabled():  # on the terminal, not in the captured setup output
            reporter.write_line(f"tests/e2e: installing {pinned} from the npm registry into {cache_dir()} "
                                "(about 760 MB, once per pin set)")
    try:
        return installed_clients(may_install=_in_ci() or asked)
    except InstallProblem as problem:
        if (problem.missing_tool or problem.not_allowed) and not _in_ci():
            pytest.skip(f"real-client tests skipped: {problem}")
        pytest.fail(f"could not install the pinned agent clients: {problem}", pytrace=False)


@pytest.fixture
def workspace(tmp_path: Path, client_bin: Path) -> Workspace:
    """A fresh :func:`build_workspace` for one test."""
    return build_workspace(tmp_path, client_bin)


def build_workspace(tmp_path: Path, client_bin: Path) -> Workspace:
    """A clone on ``main`` whose origin refuses pushes to main (StateWise's pre-receive hook,
    as in its own sandboxes), with two developer records:
    a stale ``repository.protected = false`` for main (60 days old) and a current
    ``fs.protected_paths`` naming config/prod.yaml."""
    sandbox = make_git_sandbox(tmp_path / "repo")
    work = sandbox.work
    (work / PROTECTED_FILE).parent.mkdir(parents=True)
    (work / PROTECTED_FILE).write_text(PROTECTED_TEXT, encoding="utf-8")
    (work / "package.json").write_text('{"name": "app", "version": "1.0.0", "scripts": {"test": "echo ok"}}\n',
                                       encoding="utf-8")
    git(work, "add", PROTECTED_FILE, "package.json")
    git(work, "commit", "--quiet", "-m", "config and package manifest")
    # What the clients and StateWise write into the project stays out of `git status`.
    with open(work / ".git" / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write(".statewise/\n.claude/\n.codex/\n.gemini/\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    space = Workspace(root=tmp_path, work=work, origin=sandbox.origin, home=tmp_path / "home", bin=client_bin)
    seed_store(space)
    return space


def seed_store(space: Workspace) -> None:
    """The developer's records, written into the project's default store
    (``.statewise/store.db``, where the hook finds it from its cwd) through the library, the
    same code ``statewise init`` and ``statewise record add`` run (in-process: a CLI start costs
    seconds on a loaded machine, and the CLI itself is tested elsewhere)."""
    add_record(space, "repository.protected", False, f"repo:{space.repo}@main", days_old=60)
    add_record(space, "fs.protected_paths", [PROTECTED_FILE], f"repo:{space.repo}")


def add_record(space: Workspace, key: str, value: object, scope: str, *, days_old: int = 0) -> str:
    """Store one developer record in the project's store; returns its id."""
    store = SQLiteStore(str(space.work / ".statewise" / "store.db"), key_schema=builtin_contract())
    try:
        return store.put(RecordDraft(key=key, value=value, scope=scope,
                                     provenance=Provenance(source="developer", authority="developer", actor="dev"),
                                     observed_at=datetime.now(UTC) - timedelta(days=days_old))).id
    finally:
        store.close()
