"""Store speed: StateWise's SQLite store against a raw indexed SQLite query, side by side.

For each store size this script builds a SQLite store in a temporary directory, filled with
realistic records (about 50 users, 2,000 repositories with a few branches each, workspaces
under /home/<user>/src/<repo>, about 60 base keys, global/user/workspace/repo/branch scopes,
and some superseded, retracted and expired history), then times three operations, each
next to a raw SQLite statement that does the same database work on a plain ``sqlite3``
connection to the same file, in the same run, interleaved iteration by iteration:

* retrieve   ``store.retrieve(TaskScope(...))`` vs ``SELECT <record columns> FROM sw_records
  WHERE status = 'active' AND scope IN (<the task's applicable scopes>)``, all rows fetched;
* get_active ``store.get_active(key, scope)`` vs ``SELECT ... WHERE key = ? AND scope = ?
  AND status = 'active'``;
* supersede  ``store.supersede(record_id, evidence, expected_version=...)`` vs one raw write
  transaction doing the same writes (read the old row by id, UPDATE it with a version
  check, INSERT the new row, INSERT the link row) under the same PRAGMAs (WAL,
  synchronous=NORMAL).

Goals: retrieve p50 under 5 ms at 1,000,000 records, and every operation's p50 within 3x of
its raw query (ratio = statewise p50 / raw p50).

In the same run (issue 15) it also times LangGraph's ``SqliteStore`` on the same active
records (a benchmark-only dependency: ``pip install langgraph-checkpoint-sqlite``; skip it with
``--no-langgraph``), the public bulk import (``statewise record import`` and
``Store.import_jsonl``, each in a child process, with peak RSS), the guarded hook
(``hook_entry claude-code pre`` on ``git push origin feature`` in a real repository with a bare
origin) at each store size, and with ``--postgres DSN`` the PostgreSQL backend beside raw
psycopg plus ``--concurrent-hooks`` hook processes at once on that store with a lost-update
audit. A goals summary ends the output.

Usage::

    python benchmarks/store_speed.py --records 100000 1000000 [--iterations N] [--json OUT]
    python benchmarks/store_speed.py --records 10000 100000 1000000 --postgres postgresql://... \
        --postgres-records 100000 --concurrent-hooks 16

Loading a million records through ``store.put`` one at a time would take far too long, so
the records are built as validated :class:`statewise.records.Record` objects, encoded with
the store's own ``_record_params`` and bulk-inserted with ``executemany`` into the schema the
store's migrations created, in one transaction; links go through the store's own
``_insert_link``. At most one record per (key, scope) is active, as the store requires (its
partial unique index would reject anything else).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import io
import json
import math
import os
import platform
import pstats
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from statewise.records import (
    Authority,
    Evidence,
    Link,
    LinkKind,
    Provenance,
    Record,
    RecordStatus,
    RecordTime,
    SourceKind,
    new_id,
)
from statewise.scopes import TaskScope
from statewise.store.sql import LINK_COLUMNS, RECORD_COLUMNS
from statewise.store.sqlite import SQLiteStore
from statewise.values import ValueType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_anchor import (  # noqa: E402  (a sibling module of this script)
    active_triples,
    anchor_get,
    anchor_history_write,
    anchor_retrieve,
    build_anchor,
    check_same,
    raw_import,
)

RETRIEVE_GOAL_MS = 5.0
RETRIEVE_GOAL_AT = 1_000_000
RATIO_GOAL = 3.0
LANGGRAPH_RETRIEVE_GOAL = 0.5  # statewise retrieve p50 / LangGraph's, at 1M
PG_GOALS = {"retrieve": 2.0, "supersede": 3.0}
IMPORT_GOAL_SECONDS = 30.0  # 1M lines through `statewise record import`
# Issue 27, at 1M records: statewise p50 / the anchor's p50 (benchmarks/store_anchor.py), and
# Store.import_jsonl's wall time / the raw import's (both parse the same file).
ANCHOR_GOALS = {"get_active": 2.5, "retrieve": 3.0, "supersede": 3.0}
RAW_IMPORT_GOAL = 1.5

# --- the universe: users, repositories, branches, checkouts ------------------------------

USERS = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yusuf",
    "zoe", "amir", "bianca", "chen", "dmitri", "elena", "farid", "gita", "hiro", "ines",
    "jonas", "kofi", "lena", "mateo", "nora", "oskar", "priya", "quinn", "rosa", "sven",
    "tariq", "uma", "vera", "wei", "xavier", "yara", "zain", "ada", "boris", "cleo",
]
ORGS = [
    "acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne",
    "soylent", "wonka", "aperture", "blackmesa", "oscorp", "vandelay", "pied-piper", "dunder",
    "massive", "monarch", "weyland", "gringotts", "octan", "nakatomi", "virtucon", "duff",
    "prestige", "sirius", "zorg", "rekall", "ingen", "bluth", "krusty", "sterling", "wernham",
    "lacuna", "abstergo", "gekko", "paper-st", "omni", "vault-tec",
]
WORDS = [
    "api", "web", "core", "auth", "billing", "search", "ledger", "gateway", "worker", "queue",
    "pipeline", "ingest", "report", "admin", "portal", "mobile", "sdk", "cli", "infra", "deploy",
    "metrics", "alerts", "notify", "mail", "chat", "media", "upload", "catalog", "orders", "cart",
    "payments", "invoices", "tax", "geo", "maps", "profile", "accounts", "session", "cache", "proxy",
    "router", "scheduler", "cron", "etl", "warehouse", "lake", "model", "train", "serve", "feature",
    "flags", "config", "secrets", "vault", "docs", "site", "blog", "design", "ui", "kit",
]
HOSTS = ["github.com"] * 17 + ["gitlab.com"] * 2 + ["git.internal.example"]
BRANCH_WORDS = ["login", "retry", "cache", "timeouts", "logging", "upgrade", "cleanup", "perf",
                "ui-polish", "pagination", "i18n", "dark-mode", "export", "oauth", "ratelimit"]
MONOREPO_DIRS = ["services/api", "services/worker", "packages/web", "packages/shared", "libs/core"]

PYTHON_PACKAGES = [
    "requests", "numpy", "pandas", "django", "flask", "fastapi", "pydantic", "sqlalchemy",
    "alembic", "celery", "redis", "boto3", "botocore", "pytest", "pytest-cov", "hypothesis",
    "black", "ruff", "mypy", "isort", "click", "typer", "rich", "httpx", "aiohttp", "uvicorn",
    "gunicorn", "jinja2", "markupsafe", "pyyaml", "toml", "attrs", "cryptography", "pyjwt",
    "psycopg", "psycopg2", "scipy", "scikit-learn", "matplotlib", "torch", "transformers",
    "pillow", "lxml", "beautifulsoup4", "structlog", "sentry-sdk", "orjson", "tenacity",
    "python-dateutil", "pytz", "urllib3", "certifi", "idna", "charset-normalizer", "setuptools",
    "wheel", "pip", "virtualenv", "tox", "nox", "coverage", "freezegun", "faker", "factory-boy",
]
PYTHON_PACKAGES += [f"{a}-{b}" for a in ("acme", "internal", "shared") for b in WORDS][:186]
NODE_PACKAGES = [
    "react", "react-dom", "next", "vue", "svelte", "typescript", "eslint", "prettier", "jest",
    "vitest", "webpack", "vite", "rollup", "esbuild", "babel-core", "lodash", "axios", "express",
    "koa", "fastify", "zod", "yup", "redux", "mobx", "rxjs", "moment", "dayjs", "date-fns",
    "tailwindcss", "postcss", "sass", "storybook", "cypress", "playwright", "puppeteer",
    "nodemon", "ts-node", "tsx", "dotenv", "uuid", "chalk", "commander", "yargs", "debug",
]
NODE_PACKAGES += [f"@{a}/{b}" for a in ("acme", "platform", "ui") for b in WORDS][:156]
USER_TOOLS = ["black", "ruff", "mypy", "pre-commit", "poetry", "uv", "pipx", "tox", "nox",
              "httpie", "ipython", "jupyterlab", "cookiecutter", "twine", "awscli"]

# --- the key catalogue -------------------------------------------------------------------

G, U, W, R, B = "global", "user", "workspace", "repo", "branch"


@dataclass(frozen=True)
class KeySpec:
    key: str  # base key
    value_type: ValueType
    levels: frozenset[str]
    machine: bool  # observed by a verifier (True) or stated intent (False)
    choices: tuple[str, ...] = ()
    ttl: int | None = None
    qualified: str | None = None  # "python" or "node": the key takes a package qualifier


def _k(key: str, vtype: str, levels: str, machine: bool, choices: tuple[str, ...] = (),
       ttl: int | None = None, qualified: str | None = None) -> KeySpec:
    return KeySpec(key, ValueType(vtype), frozenset(levels.split()), machine, choices, ttl, qualified)


KEYS = [
    _k("runtime.os_family", "enum", "global user", True, ("linux", "macos")),
    _k("tooling.git_version", "version", "global user", True),
    _k("policy.force_push_allowed", "bool", "global repo branch", False),
    _k("policy.require_signed_commits", "bool", "global user repo", False),
    _k("network.proxy_required", "bool", "global user", True),
    _k("network.package_index_url", "string", "global user workspace", False),
    _k("ci.default_provider", "enum", "global", False, ("github-actions", "gitlab-ci", "jenkins")),
    _k("user.editor", "enum", "user", False, ("vim", "neovim", "emacs", "vscode", "helix")),
    _k("user.shell", "enum", "user", True, ("bash", "zsh", "fish")),
    _k("user.timezone", "string", "user", False),
    _k("git.user_email", "string", "user workspace repo", False),
    _k("git.signing_key", "string", "user", False),
    _k("preferences.commit_style", "enum", "user repo", False, ("conventional", "free-form")),
    _k("preferences.test_before_push", "bool", "user repo", False),
    _k("preferences.auto_format", "bool", "user workspace", False),
    _k("tooling.docker_available", "bool", "user workspace", True, ttl=86_400),
    _k("tooling.gh_cli_version", "version", "user", True),
    _k("tooling.uv_version", "version", "user workspace", True),
    _k("tooling.pre_commit_installed", "bool", "workspace", True),
    _k("runtime.python_version", "version", "global user workspace repo branch", True),
    _k("runtime.node_version", "version", "user workspace repo branch", True),
    _k("runtime.java_version", "version", "workspace repo", True),
    _k("runtime.go_version", "version", "workspace repo", True),
    _k("runtime.rust_version", "version", "workspace repo", True),
    _k("python.venv_path", "path", "workspace", True),
    _k("python.interpreter_path", "path", "workspace", True),
    _k("python.package_manager", "enum", "workspace repo", True, ("pip", "poetry", "uv", "pdm")),
    _k("node.package_manager", "enum", "workspace repo", True, ("npm", "yarn", "pnpm", "bun")),
    _k("node.modules_installed", "bool", "workspace", True, ttl=86_400),
    _k("workspace.dirty", "bool", "workspace", True, ttl=600),
    _k("workspace.build_dir", "path", "workspace", True),
    _k("workspace.env_file", "path", "workspace", False),
    _k("workspace.current_branch", "string", "workspace", True, ttl=3_600),
    _k("repository.protected", "bool", "repo branch", True),
    _k("repository.default_branch", "string", "repo", True),
    _k("repository.visibility", "enum", "repo", True, ("public", "private", "internal")),
    _k("repository.merge_strategy", "enum", "repo", False, ("merge", "squash", "rebase")),
    _k("repository.license", "string", "repo", True),
    _k("repository.codeowners", "list", "repo branch", True),
    _k("repository.monorepo", "bool", "repo", True),
    _k("project.language", "enum", "repo", True, ("python", "typescript", "go", "rust", "java")),
    _k("project.test_command", "string", "workspace repo branch", False),
    _k("project.build_command", "string", "workspace repo branch", False),
    _k("project.lint_command", "string", "repo branch", False),
    _k("project.format_command", "string", "repo", False),
    _k("project.typecheck_command", "string", "repo branch", False),
    _k("project.docs_command", "string", "repo", False),
    _k("project.install_command", "string", "workspace repo", False),
    _k("project.min_python", "version", "repo branch", True),
    _k("project.test_timeout_seconds", "int", "workspace repo branch", False),
    _k("project.source_dirs", "list", "repo", True),
    _k("ci.provider", "enum", "repo", True, ("github-actions", "gitlab-ci", "jenkins", "circleci")),
    _k("ci.required_checks", "list", "repo branch", True),
    _k("ci.status", "enum", "branch", True, ("passing", "failing", "pending"), ttl=3_600),
    _k("ci.last_run_url", "string", "branch", True, ttl=86_400),
    _k("branch.protected", "bool", "branch", True),
    _k("branch.upstream", "string", "branch", True),
    _k("branch.merge_target", "string", "branch", False),
    _k("branch.head_commit", "string", "branch", True, ttl=3_600),
    _k("branch.behind_upstream", "int", "branch", True, ttl=3_600),
    _k("release.version", "version", "repo branch", True),
    _k("python.package_version", "version", "user workspace repo branch", True, qualified="python"),
    _k("node.package_version", "version", "workspace repo branch", True, qualified="node"),
]
SPEC_BY_KEY = {spec.key: spec for spec in KEYS}


def spec_of(key: str) -> KeySpec:
    return SPEC_BY_KEY[key.split("[", 1)[0]]


def make_value(rng: random.Random, spec: KeySpec, key: str) -> Any:
    vt = spec.value_type
    if vt is ValueType.BOOL:
        return rng.random() < 0.5
    if vt is ValueType.INT:
        return rng.choice((0, 1, 2, 5, 30, 60, 120, 300, 600, 900))
    if vt is ValueType.VERSION:
        if key == "runtime.python_version" or key == "project.min_python":
            return f"3.{rng.randint(8, 13)}.{rng.randint(0, 12)}"
        if key == "runtime.node_version":
            return f"{rng.choice((18, 20, 22))}.{rng.randint(0, 19)}.{rng.randint(0, 9)}"
        return f"{rng.randint(0, 12)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"
    if vt is ValueType.ENUM:
        return rng.choice(spec.choices)
    if vt is ValueType.PATH:
        return f"/opt/{rng.choice(WORDS)}/{rng.choice(WORDS)}/{rng.randint(1, 99)}"
    if vt is ValueType.LIST:
        return sorted(rng.sample(WORDS, rng.randint(1, 4)))
    # strings: commands, e-mail addresses, URLs, commit hashes
    if key.startswith("project."):
        tool = rng.choice(("pytest -q", "tox -e py", "make test", "npm test", "pnpm run build",
                           "ruff check .", "mypy src", "cargo test", "go test ./...", "uv run pytest"))
        return f"{tool} {rng.choice(WORDS)}"
    if key in ("branch.head_commit",):
        return f"{rng.getrandbits(160):040x}"
    if key == "ci.last_run_url":
        return f"https://ci.example/runs/{rng.randint(1, 10**7)}"
    if key in ("git.user_email",):
        return f"{rng.choice(USERS)}@{rng.choice(ORGS)}.example"
    return f"{rng.choice(WORDS)}-{rng.randint(1, 999)}"


@dataclass
class Repo:
    identity: str
    name: str
    language: str  # python, node or mixed
    branches: list[str]
    monorepo: bool


@dataclass
class Checkout:
    user: str
    repo: Repo
    root: str  # /home/<user>/src/<name>


@dataclass
class Universe:
    repos: list[Repo]
    checkouts: list[Checkout]
    # scope string -> (level, key pool)
    scopes: dict[str, tuple[str, list[str]]] = field(default_factory=dict)


def build_universe(rng: random.Random, n_repos: int = 2000) -> Universe:
    names: set[str] = set()
    repos: list[Repo] = []
    while len(repos) < n_repos:
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        if rng.random() < 0.5:
            name += f"-{rng.choice(WORDS)}"
        if name in names:
            continue
        names.add(name)
        branches = [rng.choice(("main",) * 4 + ("master",))]
        for _ in range(rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4, 5))):
            branch = rng.choice((
                f"feature/{rng.choice(BRANCH_WORDS)}-{rng.randint(1, 999)}",
                f"fix/{rng.choice(BRANCH_WORDS)}",
                f"release/{rng.randint(1, 9)}.{rng.randint(0, 30)}",
                "develop",
                f"{rng.choice(USERS)}/{rng.choice(BRANCH_WORDS)}",
            ))
            if branch not in branches:
                branches.append(branch)
        repos.append(Repo(
            identity=f"{rng.choice(HOSTS)}/{rng.choice(ORGS)}/{name}",
            name=name,
            language=rng.choice(("python",) * 5 + ("node",) * 3 + ("mixed",) * 2),
            branches=branches,
            monorepo=rng.random() < 0.1,
        ))
    checkouts: list[Checkout] = []
    for repo in repos:
        for user in rng.sample(USERS, rng.choice((1, 1, 2, 2, 2, 3, 3, 4))):
            checkouts.append(Checkout(user, repo, f"/home/{user}/src/{repo.name}"))

    base = {level: [s.key for s in KEYS if level in s.levels and s.qualified is None] for level in (G, U, W, R, B)}
    py_keys = [f"python.package_version[{p}]" for p in PYTHON_PACKAGES]
    node_keys = [f"node.package_version[{p}]" for p in NODE_PACKAGES]
    tool_keys = [f"python.package_version[{p}]" for p in USER_TOOLS]

    def packages(language: str) -> list[str]:
        return {"python": py_keys, "node": node_keys, "mixed": py_keys + node_keys}[language]

    universe = Universe(repos, checkouts)
    universe.scopes["global"] = (G, base[G])
    for user in USERS:
        universe.scopes[f"user:{user}"] = (U, base[U] + tool_keys)
        # Records at the home folder (pyenv global, ~/.config) apply to every checkout.
        universe.scopes[f"workspace:/home/{user}"] = ("home", ["runtime.python_version", "runtime.node_version",
                                                               "tooling.uv_version", "network.package_index_url"])
        universe.scopes[f"workspace:/home/{user}/src"] = ("home", ["git.user_email", "preferences.auto_format"])
    for repo in repos:
        universe.scopes[f"repo:{repo.identity}"] = (R, base[R] + packages(repo.language))
        for branch in repo.branches:
            universe.scopes[f"repo:{repo.identity}@{branch}"] = (B, base[B] + packages(repo.language))
    for checkout in checkouts:
        pool = base[W] + packages(checkout.repo.language)
        universe.scopes[f"workspace:{checkout.root}"] = (W, pool)
        if checkout.repo.monorepo:
            for sub in MONOREPO_DIRS:
                universe.scopes[f"workspace:{checkout.root}/{sub}"] = ("subdir", base[W])
    return universe


def random_task(rng: random.Random, universe: Universe) -> TaskScope:
    """A task that exists in the data: a user's checkout, on one of the repository's branches."""
    checkout = rng.choice(universe.checkouts)
    workspace = checkout.root
    if checkout.repo.monorepo and rng.random() < 0.5:
        workspace += "/" + rng.choice(MONOREPO_DIRS)
    return TaskScope(user=checkout.user, workspace=workspace, repo=checkout.repo.identity,
                     branch=rng.choice(checkout.repo.branches))


# --- generating and loading records ------------------------------------------------------

# Share of (key, scope) slots per level; the rest is fixed by the catalogue.
LEVEL_SHARE = {W: 0.30, R: 0.38, B: 0.30, U: 0.01, "home": 0.002, "subdir": 0.008}


@dataclass
class Dataset:
    rows: list[tuple[Any, ...]]  # encoded sw_records rows, in insertion order
    links: list[Link]
    active: list[tuple[str, str, str]]  # (record id, key, scope) of every active record
    counts: dict[str, int]


def slot_quotas(rng: random.Random, universe: Universe, n_slots: int) -> dict[str, int]:
    """How many (key, scope) slots each scope gets: a lognormal spread within each level."""
    by_level: dict[str, list[str]] = {}
    for scope, (level, _) in universe.scopes.items():
        by_level.setdefault(level, []).append(scope)
    quotas = {"global": len(universe.scopes["global"][1])}
    for level, share in LEVEL_SHARE.items():
        scopes = by_level[level]
        weights = [rng.lognormvariate(0, 0.6) for _ in scopes]
        total = sum(weights)
        for scope, weight in zip(scopes, weights, strict=True):
            pool = len(universe.scopes[scope][1])
            quotas[scope] = max(1, min(pool, round(n_slots * share * weight / total)))
    return quotas


def provenance_for(rng: random.Random, spec: KeySpec, scope: str) -> Provenance:
    if spec.machine:
        if rng.random() < 0.8:
            return Provenance(source=SourceKind.OBSERVATION, authority=Authority.MACHINE,
                              actor=f"verifier.{spec.key.split('.', 1)[0]}")
        return Provenance(source=SourceKind.TOOL_OUTPUT, authority=Authority.MACHINE, actor="tool.shell",
                          reference=f"call-{rng.randint(1, 10**6)}")
    if rng.random() < 0.7:
        return Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER, actor=rng.choice(USERS))
    return Provenance(source=SourceKind.AGENT_INFERENCE, authority=Authority.AGENT, actor="agent.coder")


def generate(rng: random.Random, universe: Universe, n_records: int, store: SQLiteStore) -> Dataset:
    """Build ``n_records`` valid, encoded records with history, at most one active per (key, scope)."""
    now = datetime.now(UTC)
    # Slot patterns: (probability, what happens to one (key, scope)).
    #   85% one active record; 10% a chain of 1-3 superseded records then the active one;
    #   2% retracted then put again; 2% retracted and nothing since; 1% expired.
    rows_per_slot = 0.85 + 0.10 * (1 + 1.4) + 0.02 * 2 + 0.02 + 0.01
    quotas = slot_quotas(rng, universe, math.ceil(n_records / rows_per_slot * 1.1))
    slots = [(key, scope) for scope, quota in quotas.items()
             for key in rng.sample(universe.scopes[scope][1], quota)]
    rng.shuffle(slots)

    rows: list[tuple[str, tuple[Any, ...]]] = []  # (recorded_at, params) for sorting
    links: list[Link] = []
    active: list[tuple[str, str, str]] = []
    counts = {status.value: 0 for status in RecordStatus}
    encode = store._record_params
    enc_time = store._encode_time

    def record(key: str, scope: str, spec: KeySpec, value: Any, observed: datetime, status: RecordStatus,
               **extra: Any) -> Record:
        rec = Record(
            id=extra.pop("id", None) or new_id("rec"), key=key, value=value, value_type=spec.value_type,
            scope=scope, status=status,
            time=RecordTime(observed_at=observed, recorded_at=observed + timedelta(seconds=rng.randint(1, 90)),
                            verified_at=extra.pop("verified_at", None), ttl_seconds=spec.ttl),
            provenance=extra.pop("provenance", None) or provenance_for(rng, spec, scope),
            **extra,
        )
        rows.append((enc_time(rec.time.recorded_at), encode(rec)))
        counts[status.value] += 1
        return rec

    for key, scope in slots:
        if len(rows) >= n_records:
            break
        spec = spec_of(key)
        room = n_records - len(rows)
        pattern = rng.random()
        start = now - timedelta(days=rng.uniform(1, 730))
        if pattern < 0.85 or room < 5:
            observed = now - timedelta(seconds=rng.uniform(60, 180 * 86_400))
            verified = observed + timedelta(seconds=rng.uniform(0, (now - observed).total_seconds()))
            rec = record(key, scope, spec, make_value(rng, spec, key), observed, RecordStatus.ACTIVE,
                         verified_at=verified if rng.random() < 0.3 else None)
            active.append((rec.id, key, scope))
        elif pattern < 0.95:
            chain_length = rng.choices((1, 2, 3), (0.7, 0.2, 0.1))[0]
            ids = [new_id("rec") for _ in range(chain_length + 1)]
            values = [make_value(rng, spec, key)]
            while len(values) <= chain_length:
                value = make_value(rng, spec, key)
                if spec.value_type is ValueType.BOOL:
                    value = not values[-1]
                if value != values[-1]:  # each correction changed the value
                    values.append(value)
            observed = start
            previous: Record | None = None
            for position, rid in enumerate(ids):
                last = position == chain_length
                value = values[position]
                if last:
                    rec = record(key, scope, spec, value, observed, RecordStatus.ACTIVE, id=rid,
                                 supersedes=previous.id if previous else None)
                    active.append((rec.id, key, scope))
                else:
                    changed = observed + timedelta(days=rng.uniform(1, 60))
                    rec = record(key, scope, spec, value, observed, RecordStatus.SUPERSEDED, id=rid,
                                 supersedes=previous.id if previous else None, superseded_by=ids[position + 1],
                                 version=2, status_reason="corrected", status_changed_at=changed)
                    successor_observed = changed - timedelta(seconds=rng.randint(1, 120))
                    links.append(Link(
                        id=new_id("lnk"), kind=LinkKind.SUPERSEDE, from_record=rid, to_record=ids[position + 1],
                        scope=scope, reason="corrected", actor=f"verifier.{spec.key.split('.', 1)[0]}",
                        created_at=changed,
                        evidence=Evidence(key=key, value=values[position + 1], value_type=spec.value_type,
                                          scope=scope, source=SourceKind.OBSERVATION, authority=Authority.MACHINE,
                                          actor=f"verifier.{spec.key.split('.', 1)[0]}",
                                          observed_at=successor_observed, detail="observed a different value"),
                    ))
                    observed = successor_observed
                previous = rec
        elif pattern < 0.99:
            retracted_at = start + timedelta(days=rng.uniform(1, 60))
            rec = record(key, scope, spec, make_value(rng, spec, key), start, RecordStatus.RETRACTED,
                         version=2, status_reason="forget this", status_changed_at=retracted_at)
            links.append(Link(id=new_id("lnk"), kind=LinkKind.RETRACT, from_record=rec.id, to_record=None,
                              scope=scope, reason="forget this", actor=rng.choice(USERS), created_at=retracted_at))
            if pattern < 0.97:  # put again later
                rec = record(key, scope, spec, make_value(rng, spec, key),
                             retracted_at + timedelta(days=rng.uniform(1, 30)), RecordStatus.ACTIVE)
                active.append((rec.id, key, scope))
        else:
            expired_at = start + timedelta(days=rng.uniform(1, 60))
            rec = record(key, scope, spec, make_value(rng, spec, key), start, RecordStatus.EXPIRED,
                         version=2, status_reason="ttl lapsed", status_changed_at=expired_at)
            links.append(Link(id=new_id("lnk"), kind=LinkKind.EXPIRE, from_record=rec.id, to_record=None,
                              scope=scope, reason="ttl lapsed", actor="statewise", created_at=expired_at))
    if len(rows) != n_records:
        raise SystemExit(f"generated {len(rows)} records, wanted {n_records}: raise the slot margin")
    rows.sort(key=lambda item: item[0])  # insert in the order the records were learned
    links.sort(key=lambda link: link.created_at)
    return Dataset([params for _, params in rows], links, active, counts)


def load(store: SQLiteStore, dataset: Dataset) -> None:
    conn = store._conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(
            f"INSERT INTO sw_records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * 19)})", dataset.rows
        )
        cur = conn.cursor()
        for link in dataset.links:
            store._insert_link(cur, link)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# --- timing ------------------------------------------------------------------------------


class Timed(int):
    """A call's wall time in ns that also carries its CPU time in ns (``cpu``): this process's
    CPU time, which covers SQLite's work (it runs in-process) and, unlike the wall time, not
    the time other processes held the core, so it is the steadier figure on a loaded machine."""

    cpu: int

    def __new__(cls, wall: int, cpu: int) -> Timed:
        made = super().__new__(cls, wall)
        made.cpu = cpu
        return made


def stats(samples_ns: list[int]) -> dict[str, float]:
    ordered = sorted(samples_ns)
    n = len(ordered)

    def pct(p: float) -> float:
        return ordered[min(n - 1, max(0, math.ceil(p / 100 * n) - 1))] / 1e6

    out = {"p50_ms": statistics.median(ordered) / 1e6, "p95_ms": pct(95), "mean_ms": statistics.fmean(ordered) / 1e6,
           "n": n}
    if ordered and all(isinstance(sample, Timed) for sample in ordered):
        out["cpu_p50_ms"] = statistics.median(sample.cpu for sample in ordered) / 1e6  # type: ignore[attr-defined]
    return out


def raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def time_pair(lib: tuple[Any, ...], raw: tuple[Any, ...], raw_first: bool) -> tuple[int, int, Any, Any]:
    """Time ``lib[0](*lib[1:])`` and ``raw[0](*raw[1:])`` back to back, in the given order.

    Returns (statewise ns, raw ns, statewise result, raw result).
    """
    clock, cpu = time.perf_counter_ns, time.process_time_ns
    lib_fn, *lib_args = lib
    raw_fn, *raw_args = raw
    if raw_first:
        c0, t0 = cpu(), clock()
        raw_out = raw_fn(*raw_args)
        t1, c1 = clock(), cpu()
        lib_out = lib_fn(*lib_args)
        t2, c2 = clock(), cpu()
        return Timed(t2 - t1, c2 - c1), Timed(t1 - t0, c1 - c0), lib_out, raw_out
    c0, t0 = cpu(), clock()
    lib_out = lib_fn(*lib_args)
    t1, c1 = clock(), cpu()
    raw_out = raw_fn(*raw_args)
    t2, c2 = clock(), cpu()
    return Timed(t1 - t0, c1 - c0), Timed(t2 - t1, c2 - c1), lib_out, raw_out


def q(raw: Any, statement: str) -> str:
    """The statement in the driver's placeholder style (psycopg takes %s)."""
    return statement if isinstance(raw, sqlite3.Connection) else statement.replace("?", "%s")


def _raw_retrieve(raw: Any, scopes: tuple[str, ...]) -> list[Any]:
    return raw.execute(q(raw,
        f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = 'active' "
        f"AND scope IN ({', '.join('?' * len(scopes))})"), scopes,
    ).fetchall()


RAW_GET_ACTIVE = f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'"


def _raw_get_active(raw: Any, key: str, scope: str) -> Any:
    return raw.execute(q(raw, RAW_GET_ACTIVE), (key, scope)).fetchone()


def time_third(i: int, fn: Any, *args: Any) -> tuple[int, Any]:
    """Time a third store's call (LangGraph) in the same iteration; (ns, result)."""
    clock, cpu = time.perf_counter_ns, time.process_time_ns
    c0, t0 = cpu(), clock()
    out = fn(*args)
    t1, c1 = clock(), cpu()
    return Timed(t1 - t0, c1 - c0), out


def bench_retrieve(store, raw, rng, universe, iterations, warmup, lg=None, anchor=None) -> dict[str, Any]:
    lib_ns, raw_ns, raw_rows, lib_records, near, lg_ns, anchor_ns = [], [], [], [], [], [], []
    rows_ns = []
    for i in range(warmup + iterations):
        task = random_task(rng, universe)
        scopes = tuple(str(s) for s in task.applicable_scopes())  # given to the raw query, untimed
        # The same retrieval as plain rows (store.retrieve_rows: no model per row), in the same
        # iteration as the others, before them on odd iterations and after them on even ones.
        if i % 2 == 1:
            rows_t, light = time_third(i, store.retrieve_rows, task)
        if anchor is not None and i % 2 == 1:
            anchor_t, anchor_rows = time_third(i, anchor_retrieve, anchor, scopes)
        if lg is not None and i % 2 == 0:
            lg_t, items = time_third(i, lg_retrieve, lg, scopes)
        lib_t, raw_t, result, rows = time_pair((store.retrieve, task), (_raw_retrieve, raw, scopes), i % 2 == 1)
        if lg is not None and i % 2 == 1:
            lg_t, items = time_third(i, lg_retrieve, lg, scopes)
        if anchor is not None and i % 2 == 0:
            anchor_t, anchor_rows = time_third(i, anchor_retrieve, anchor, scopes)
        if i % 2 == 0:
            rows_t, light = time_third(i, store.retrieve_rows, task)
        if len(light.records) + len(light.stale) + len(light.shadowed) != len(rows):
            raise SystemExit(f"retrieve_rows and the raw query disagree for {task}")
        if i >= warmup:
            rows_ns.append(rows_t)
        if anchor is not None:
            check_same("retrieve", anchor_rows, len(rows))
            if i >= warmup:
                anchor_ns.append(anchor_t)
        if lg is not None:
            if len(items) != len(rows):
                raise SystemExit(f"LangGraph and the raw query disagree for {task}: {len(items)} vs {len(rows)}")
            if i >= warmup:
                lg_ns.append(lg_t)
        got = len(result.records) + len(result.stale) + len(result.shadowed)
        if got != len(rows):
            raise SystemExit(f"retrieve and the raw query disagree for {task}: {got} vs {len(rows)} rows")
        if i >= warmup:
            lib_ns.append(lib_t)
            raw_ns.append(raw_t)
            raw_rows.append(len(rows))
            lib_records.append(len(result.records))
            near.append(len(result.near_misses))
    return {"statewise": stats(lib_ns), "raw": stats(raw_ns), **({"langgraph": stats(lg_ns)} if lg_ns else {}),
            **({"anchor": stats(anchor_ns)} if anchor_ns else {}), "rows": stats(rows_ns),
            "rows_per_call": statistics.fmean(raw_rows), "records_in_force_per_call": statistics.fmean(lib_records),
            "near_misses_per_call": statistics.fmean(near)}


def rows_result(retrieve: dict[str, Any]) -> dict[str, Any]:
    """store.retrieve_rows's figures beside the raw, anchor and LangGraph samples of the same
    iterations (bench_retrieve timed all of them in one loop)."""
    return {"statewise": retrieve.pop("rows"),
            **{side: retrieve[side] for side in ("raw", "langgraph", "anchor") if side in retrieve}}


def bench_get_active(store, raw, rng, dataset, iterations, warmup, lg=None, anchor=None) -> dict[str, Any]:
    lib_ns, raw_ns, lg_ns, anchor_ns = [], [], [], []
    for i in range(warmup + iterations):
        rid, key, scope = rng.choice(dataset.active)
        if anchor is not None and i % 2 == 1:
            anchor_t, anchor_row = time_third(i, anchor_get, anchor, scope, key)
        if lg is not None and i % 2 == 0:
            lg_t, item = time_third(i, lg.get, lg_namespace(scope), key)
        lib_t, raw_t, found, row = time_pair((store.get_active, key, scope), (_raw_get_active, raw, key, scope),
                                             i % 2 == 1)
        if lg is not None and i % 2 == 1:
            lg_t, item = time_third(i, lg.get, lg_namespace(scope), key)
        if anchor is not None and i % 2 == 0:
            anchor_t, anchor_row = time_third(i, anchor_get, anchor, scope, key)
        if anchor is not None:
            check_same("get", anchor_row, 1)
            if i >= warmup:
                anchor_ns.append(anchor_t)
        if lg is not None:
            if item is None:
                raise SystemExit(f"LangGraph did not find ({key}, {scope})")
            if i >= warmup:
                lg_ns.append(lg_t)
        if found is None or row is None or found.id != rid or row[0] != rid:
            raise SystemExit(f"get_active did not find {rid} for ({key}, {scope})")
        if i >= warmup:
            lib_ns.append(lib_t)
            raw_ns.append(raw_t)
    return {"statewise": stats(lib_ns), "raw": stats(raw_ns), **({"langgraph": stats(lg_ns)} if lg_ns else {}),
            **({"anchor": stats(anchor_ns)} if anchor_ns else {})}


RAW_SELECT_OLD = "SELECT key, scope, value_type, ttl_seconds, version, status FROM sw_records WHERE id = ?"
RAW_MARK_OLD = ("UPDATE sw_records SET status = 'superseded', superseded_by = ?, status_reason = ?, "
                "status_changed_at = ?, version = version + 1 WHERE id = ? AND version = ? AND status = 'active'")
RAW_INSERT_RECORD = f"INSERT INTO sw_records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * 19)})"
RAW_INSERT_LINK = f"INSERT INTO sw_links ({LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _stamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def raw_supersede(raw: Any, record_id: str, expected_version: int, value_json: str,
                  evidence: dict[str, Any], observed: str) -> None:
    """The same writes as store.supersede (read the old row, mark it with a version check,
    insert the new row and the link, in one transaction), with nothing but the driver and json."""
    new_rid = "rec_" + os.urandom(13).hex().upper()
    now = _stamp(datetime.now(UTC))
    lite = isinstance(raw, sqlite3.Connection)
    raw.execute("BEGIN IMMEDIATE" if lite else "BEGIN")
    try:
        row = raw.execute(q(raw, RAW_SELECT_OLD + ("" if lite else " FOR UPDATE")), (record_id,)).fetchone()
        if row is None or row[4] != expected_version or row[5] != "active":
            raise RuntimeError(f"raw supersede: {record_id} is not active at version {expected_version}")
        key, scope, value_type, ttl = row[0], row[1], row[2], row[3]
        cur = raw.execute(q(raw, RAW_MARK_OLD), (new_rid, evidence["detail"], now, record_id, expected_version))
        if cur.rowcount != 1:
            raise RuntimeError("raw supersede: stale version")
        raw.execute(q(raw, RAW_INSERT_RECORD), (
            new_rid, key, scope, value_type, value_json, "active", observed, now, observed, ttl,
            evidence["source"], evidence["authority"], evidence["actor"], None, record_id, None, 1, None, None,
        ))
        raw.execute(q(raw, RAW_INSERT_LINK), (
            "lnk_" + os.urandom(13).hex().upper(), "supersede", record_id, new_rid, scope,
            json.dumps(evidence, separators=(",", ":"), sort_keys=True), "", evidence["actor"], now,
        ))
        raw.execute("COMMIT")
    except BaseException:
        raw.execute("ROLLBACK")
        raise


def bench_supersede(store, raw, rng, dataset, iterations, warmup, lg=None, anchor=None) -> dict[str, Any]:
    """Each iteration supersedes two different active records, one through each path (and
    overwrites the StateWise one's key in LangGraph, which keeps no history, and in the
    anchor, which copies the old value to its history table first)."""
    total = warmup + iterations
    picked = rng.sample(dataset.active, 2 * total)
    lib_ns, raw_ns, lg_ns, anchor_ns = [], [], [], []
    read = raw.cursor()
    for i in range(total):
        prepared = []
        for rid, key, scope in (picked[2 * i], picked[2 * i + 1]):
            value_type, value_json, version = read.execute(q(raw,
                "SELECT value_type, value_json, version FROM sw_records WHERE id = ?"), (rid,)).fetchone()
            spec = spec_of(key)
            current = json.loads(value_json) if isinstance(raw, sqlite3.Connection) else value_json  # jsonb: decoded
            value = make_value(rng, spec, key)
            while value == current:
                value = make_value(rng, spec, key) if spec.value_type is not ValueType.BOOL else not current
            observed = datetime.now(UTC)
            evidence = Evidence(key=key, value=value, value_type=value_type, scope=scope,
                                source=SourceKind.OBSERVATION, authority=Authority.MACHINE,
                                actor="verifier.bench", observed_at=observed, detail="observed a different value")
            prepared.append((rid, version, evidence))
        (lib_rid, lib_version, lib_evidence), (raw_rid, raw_version, raw_evidence) = prepared
        raw_args = (raw_rid, raw_version, json.dumps(raw_evidence.value, separators=(",", ":"), sort_keys=True),
                    raw_evidence.model_dump(mode="json"), _stamp(raw_evidence.observed_at))

        if lg is not None:
            lg_args = (lg_namespace(lib_evidence.scope), lib_evidence.key,
                       {"value": lib_evidence.value, "value_type": lib_evidence.value_type.value,
                        "observed_at": _stamp(lib_evidence.observed_at), "source": "observation",
                        "authority": "machine", "actor": lib_evidence.actor})
        anchor_args = (lib_evidence.scope, lib_evidence.key,
                       json.dumps(lib_evidence.value, separators=(",", ":"), sort_keys=True))
        if anchor is not None and i % 2 == 1:
            anchor_t, _ = time_third(i, anchor_history_write, anchor, *anchor_args)
        if lg is not None and i % 2 == 0:
            lg_t, _ = time_third(i, lg.put, *lg_args)
        lib_t, raw_t, _, _ = time_pair(
            (functools.partial(store.supersede, expected_version=lib_version), lib_rid, lib_evidence),
            (raw_supersede, raw, *raw_args), i % 2 == 1,
        )
        if lg is not None and i % 2 == 1:
            lg_t, _ = time_third(i, lg.put, *lg_args)
        if anchor is not None and i % 2 == 0:
            anchor_t, _ = time_third(i, anchor_history_write, anchor, *anchor_args)
        if i >= warmup:
            lib_ns.append(lib_t)
            raw_ns.append(raw_t)
            if lg is not None:
                lg_ns.append(lg_t)
            if anchor is not None:
                anchor_ns.append(anchor_t)
    return {"statewise": stats(lib_ns), "raw": stats(raw_ns), **({"langgraph": stats(lg_ns)} if lg_ns else {}),
            **({"anchor": stats(anchor_ns)} if anchor_ns else {})}


def profile_retrieve(store, rng, universe, calls: int) -> str:
    tasks = [random_task(rng, universe) for _ in range(calls)]
    profiler = cProfile.Profile()
    profiler.enable()
    for task in tasks:
        store.retrieve(task)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
    return out.getvalue()


def breakdown_retrieve(store, raw, rng, universe, calls: int) -> list[tuple[str, float]]:
    """Where store.retrieve's time goes: its parts timed one by one (p50 ms over ``calls`` tasks).

    It re-runs, outside the library, the statements ``SQLStore.retrieve`` issues (read from
    src/statewise/store/sql.py) and the library's own row mapping on the rows they return.
    """
    from statewise.records import Retrieval, utcnow

    tasks = [random_task(rng, universe) for _ in range(calls)]
    scopes = {id(t): [str(s) for s in t.applicable_scopes()] for t in tasks}
    conn = store._conn

    def main_sql(task: TaskScope, bound: bool) -> list[Any]:
        applicable = scopes[id(task)]
        marks = ", ".join("?" * len(applicable))
        if bound:  # as the library writes it: status as a bound parameter
            return conn.execute(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = ? AND scope IN ({marks})",
                                ("active", *applicable)).fetchall()
        return conn.execute(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = 'active' AND scope IN ({marks})",
                            applicable).fetchall()

    def near_sql(task: TaskScope) -> list[Any]:
        rows: list[Any] = []
        for prefix in (f"repo:{task.repo}@", "workspace:" + task.workspace.rstrip("/") + "/"):
            rows += conn.execute(
                f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = ? AND scope >= ? AND scope < ? "
                "ORDER BY seq LIMIT ?", ("active", prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1), 80),
            ).fetchall()
        return rows

    main_rows = {id(t): main_sql(t, False) for t in tasks}
    near_rows = {id(t): near_sql(t) for t in tasks}
    modelled = {id(t): [store._record_from_row(r) for r in main_rows[id(t)]] for t in tasks}
    now = utcnow()

    def order(task: TaskScope) -> None:
        rank = {scope: i for i, scope in enumerate(scopes[id(task)])}
        seen: set[str] = set()
        for record in sorted(modelled[id(task)], key=lambda r: (r.key, rank[r.scope])):
            if record.key not in seen:
                seen.add(record.key)
                record.is_stale(now)

    parts = [
        ("store.retrieve, whole call", lambda t: store.retrieve(t)),
        ("main SELECT, status as a bound parameter (as the library)", lambda t: main_sql(t, True)),
        ("main SELECT, status as a literal (the raw query)", lambda t: main_sql(t, False)),
        ("modelling the main rows (_record_from_row)", lambda t: [store._record_from_row(r) for r in main_rows[id(t)]]),
        ("near-miss SELECTs (2 prefix queries)", near_sql),
        ("modelling the near-miss rows", lambda t: [store._record_from_row(r) for r in near_rows[id(t)]]),
        ("sort by specificity, shadowing, staleness", order),
        ("Retrieval(...), validating the record lists again", lambda t: Retrieval(
            task="x", records=modelled[id(t)], stale=[], shadowed=[], near_misses=[])),
        ("Retrieval.model_construct(...), not validating", lambda t: Retrieval.model_construct(
            task="x", records=modelled[id(t)], stale=[], shadowed=[], near_misses=[])),
    ]
    results = []
    for label, part in parts:
        for task in tasks[: max(1, calls // 10)]:
            part(task)
        samples = []
        for task in tasks:
            start = time.perf_counter_ns()
            part(task)
            samples.append(time.perf_counter_ns() - start)
        results.append((label, statistics.median(samples) / 1e6))
    rows = statistics.fmean(len(v) for v in main_rows.values())
    near = statistics.fmean(len(v) for v in near_rows.values())
    results.append((f"(rows per call: main {rows:.1f}, near-miss {near:.1f})", float("nan")))
    return results


def breakdown_get_active(store, rng, dataset, calls: int) -> list[tuple[str, float]]:
    """Where store.get_active's time goes, part by part (p50 ms over ``calls`` lookups)."""
    from statewise.scopes import Scope

    picks = [rng.choice(dataset.active) for _ in range(calls)]
    conn = store._conn
    bound_sql = f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = ?"
    literal_sql = f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'"
    rows = {rid: conn.execute(literal_sql, (key, scope)).fetchone() for rid, key, scope in picks}

    def begin_commit(_: Any) -> None:
        conn.execute("BEGIN")
        conn.execute("COMMIT")

    parts = [
        ("store.get_active, whole call", lambda p: store.get_active(p[1], p[2])),
        ("SELECT, status as a bound parameter (as the library)",
         lambda p: conn.execute(bound_sql, (p[1], p[2], "active")).fetchone()),
        ("SELECT, status as a literal (the raw query)", lambda p: conn.execute(literal_sql, (p[1], p[2])).fetchone()),
        ("Scope.parse of the scope argument", lambda p: str(Scope.parse(p[2]))),
        ("BEGIN + COMMIT of the read transaction", begin_commit),
        ("modelling the row (_record_from_row)", lambda p: store._record_from_row(rows[p[0]])),
    ]
    results = []
    for label, part in parts:
        for pick in picks[: max(1, calls // 10)]:
            part(pick)
        samples = []
        for pick in picks:
            start = time.perf_counter_ns()
            part(pick)
            samples.append(time.perf_counter_ns() - start)
        results.append((label, statistics.median(samples) / 1e6))
    return results


def query_plans(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The plans SQLite picks for the library's statements and for the raw ones."""
    scope_in = ", ".join("?" * 9)
    probes = [
        ("statewise retrieve", f"SELECT id FROM sw_records WHERE status = ? AND scope IN ({scope_in})",
         ("active",) + ("global",) * 9),
        ("raw retrieve", f"SELECT id FROM sw_records WHERE status = 'active' AND scope IN ({scope_in})",
         ("global",) * 9),
        ("statewise near-miss", ("SELECT seq FROM sw_records WHERE status = 'active' AND scope >= ? AND scope < ? "
                                 "AND scope NOT IN (?) ORDER BY scope, key LIMIT ?"),
         ("repo:a@", "repo:a@~", "repo:a@main", 20)),
        ("statewise get_active", "SELECT id FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'",
         ("k.k", "global")),
        ("raw get_active", "SELECT id FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'",
         ("k.k", "global")),
    ]
    plans = []
    for label, sql, params in probes:
        detail = "; ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        plans.append((label, detail))
    return plans


# --- the run -----------------------------------------------------------------------------



# --- the comparisons a user would make: LangGraph's SqliteStore, the public import, the hook ----


def lg_namespace(scope: str) -> tuple[str, ...]:
    """LangGraph namespace labels may not hold '.', so the scope is percent-encoded there."""
    return (scope.replace("%", "%25").replace(".", "%2E"),)


def open_langgraph(path: Path) -> Any:
    """LangGraph's SqliteStore on its own file, under the same PRAGMAs as the others."""
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    store = SqliteStore(conn)
    store.setup()
    return store


def lg_value(row: tuple[Any, ...]) -> dict[str, Any]:
    """What a LangGraph user keeps per (namespace, key): the value and its provenance."""
    return {"value": json.loads(row[4]), "value_type": row[3], "observed_at": row[6], "source": row[10],
            "authority": row[11], "actor": row[12]}


def load_langgraph(lg: Any, active_rows: list[tuple[Any, ...]]) -> float:
    """Put every active record (LangGraph keeps no history) in batches of 1,000; seconds."""
    from langgraph.store.base import PutOp

    started = time.perf_counter()
    for start in range(0, len(active_rows), 1000):
        lg.batch([PutOp(lg_namespace(row[2]), row[1], lg_value(row)) for row in active_rows[start:start + 1000]])
    return time.perf_counter() - started


def lg_retrieve(lg: Any, scopes: tuple[str, ...]) -> list[Any]:
    """A task's records from LangGraph: one search per applicable scope, in one batch call."""
    from langgraph.store.base import SearchOp

    results = lg.batch([SearchOp(lg_namespace(scope), limit=100_000) for scope in scopes])
    return [item for found in results for item in found]


def jsonl_line(row: tuple[Any, ...]) -> str:
    """The ``record export`` line of one encoded record row (the value is already JSON)."""
    (rid, key, scope, value_type, value_json, status, observed, recorded, verified, ttl, source, authority, actor,
     reference, supersedes, superseded_by, version, status_reason, status_changed_at) = row
    rest = {"value_type": value_type, "scope": scope, "status": status,
            "time": {"observed_at": observed, "recorded_at": recorded, "verified_at": verified, "ttl_seconds": ttl},
            "provenance": {"source": source, "authority": authority, "actor": actor, "reference": reference},
            "supersedes": supersedes, "superseded_by": superseded_by, "version": version,
            "status_reason": status_reason, "status_changed_at": status_changed_at}
    return (f'{{"type": "record", "id": {json.dumps(rid)}, "key": {json.dumps(key)}, "value": {value_json}, '
            + json.dumps(rest)[1:] + "\n")


def write_jsonl(path: Path, dataset: Dataset) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for row in dataset.rows:
            out.write(jsonl_line(row))
        for link in dataset.links:
            out.write(json.dumps({"type": "link", **link.model_dump(mode="json")}) + "\n")


def bench_contract(path: Path) -> Path:
    """A contract (extending the built-in one) that declares every key the data uses, so the
    CLI import checks each line against a key schema, as it does for a user."""
    from statewise.contract import builtin_contract

    builtin = builtin_contract()
    lines = ["name: store-bench", "version: 1", "description: the store benchmark's keys", "extends: coding",
             "state:"]
    for spec in KEYS:
        if builtin.key_type(spec.key) is not None or builtin.key_type(spec.key + "[x]") is not None:
            continue
        lines += [f"  {spec.key}:", f"    type: {spec.value_type.value}", "    scope: global",
                  f"    authority: {'machine' if spec.machine else 'developer'}", "    description: benchmark key"]
        if spec.key.endswith("package_version"):
            lines.append("    qualified: true")
        if spec.choices:
            lines.append(f"    choices: [{', '.join(spec.choices)}]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# The child's own peak RSS. ``ru_maxrss`` from wait4 will not do: a child forked from this
# process starts with this process's pages counted, and the kernel keeps that high-water mark
# across exec, so a child of a 1.5 GB benchmark "peaks" at 1.5 GB. VmHWM is the exec'd
# program's own memory only.
PEAK_RSS_WRAPPER = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write('\\nVmHWM ' + line.split()[1] + '\\n')\n"
    "atexit.register(_peak)\n"
)


def peak_rss_mib(stderr: str) -> float:
    """The VmHWM line PEAK_RSS_WRAPPER wrote, in MiB (NaN if missing)."""
    for line in stderr.splitlines():
        if line.startswith("VmHWM "):
            return int(line.split()[1]) / 1024
    return math.nan


def bench_import(tmp: Path, jsonl: Path, n_lines: int, api: bool) -> dict[str, Any]:
    """``statewise record import`` in a child process (wall, CPU, peak RSS) and, with ``api``,
    ``Store.import_jsonl`` on the open file in this process, each into an empty store."""
    contract = bench_contract(tmp / "contract.yaml")
    target = tmp / "imported-cli.db"
    argv = [sys.executable, "-c", PEAK_RSS_WRAPPER + "from statewise.cli import main\nmain(prog_name='statewise')\n",
            "--contract", str(contract), "--store", str(target), "record", "import", "--no-progress", str(jsonl)]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0 or f"imported {n_lines} lines" not in out:
        raise SystemExit(f"record import failed: {out}{err}")
    result: dict[str, Any] = {
        "cli_seconds": wall, "cli_cpu_seconds": usage.ru_utime + usage.ru_stime,
        "cli_peak_rss_mib": peak_rss_mib(err), "jsonl_mib": jsonl.stat().st_size / 2**20,
        "loadavg": [load_before, os.getloadavg()[0]],
    }
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    if api:
        # In a child process too, as a user's script would run it: this benchmark's own heap
        # (a million generated rows) would otherwise make every collection walk it.
        target = tmp / "imported-api.db"
        script = ("import sys, time\nfrom statewise.contract import load_contract\n"
                  "from statewise.store import open_store\n"
                  "store = open_store(sys.argv[1], key_schema=load_contract(sys.argv[2]))\n"
                  "started = time.perf_counter()\nwith open(sys.argv[3], encoding='utf-8') as handle:\n"
                  "    count = store.import_jsonl(handle, source=sys.argv[3])\n"
                  "print(count, time.perf_counter() - started)\n")
        child = subprocess.Popen([sys.executable, "-c", PEAK_RSS_WRAPPER + script, str(target), str(contract),
                                  str(jsonl)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
        if os.waitstatus_to_exitcode(status) != 0 or out.split()[:1] != [str(n_lines)]:
            raise SystemExit(f"Store.import_jsonl failed: {out}{err}")
        result["api_seconds"] = float(out.split()[1])
        result["api_cpu_seconds"] = usage.ru_utime + usage.ru_stime
        result["api_peak_rss_mib"] = peak_rss_mib(err)
        for suffix in ("", "-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
    return result


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args], cwd=cwd,
                   check=True, capture_output=True, timeout=60)


def hook_world(root: Path) -> tuple[Path, str]:
    """A real repository with a bare origin, on a feature branch; and the PreToolUse JSON of
    ``git push origin feature`` that Claude Code hands its hook there."""
    root.mkdir(parents=True, exist_ok=True)
    origin, work = root / "origin.git", root / "work"
    _git(root, "init", "-q", "--bare", str(origin))
    _git(root, "init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("bench\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "init")
    _git(work, "remote", "add", "origin", str(origin))
    _git(work, "push", "-q", "origin", "main")
    _git(work, "checkout", "-q", "-b", "feature")
    payload = json.dumps({"session_id": "bench", "cwd": str(work), "hook_event_name": "PreToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "git push origin feature"},
                          "tool_use_id": "toolu_bench"})
    return work, payload


def hook_call(work: Path, payload: str, store: str, env: dict[str, str]) -> tuple[float, str]:
    """One guarded call through the hook's entry point; (wall ms, decision)."""
    argv = [sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre", "--store", store]
    started = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, cwd=work, env=env, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"hook failed ({done.returncode}): {done.stdout}{done.stderr}")
    return elapsed, done.stdout.strip()


def hook_env(root: Path) -> dict[str, str]:
    env = {**os.environ, "STATEWISE_CACHE_DIR": str(root / "cache"), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("STATEWISE_STORE", None)
    return env


def bench_hook(store: str, calls: int, root: Path) -> dict[str, Any]:
    """p50/p95 of the guarded ``git push origin feature`` call against ``store``, one call at
    a time, after one untimed call (the first call of a session warms caches)."""
    work, payload = hook_world(root)
    env = hook_env(root)
    _, decision = hook_call(work, payload, store, env)
    load_before = os.getloadavg()[0]
    samples = [hook_call(work, payload, store, env)[0] for _ in range(calls)]
    return {**stats([int(ms * 1e6) for ms in samples]), "decision": decision[:160],
            "loadavg": [load_before, os.getloadavg()[0]]}


def audit_lost_updates(rows: list[tuple[Any, ...]], verify_links: dict[str, int]) -> int:
    """Writes that left no trace: a record's version counts every change made to it (a status
    change, a confirmation), so version - 1 must equal its confirmations plus one if it is no
    longer active; anything else is an update another writer overwrote."""
    lost = 0
    for rid, status, version in rows:
        lost += version - 1 != verify_links.get(rid, 0) + (status != "active")
    return lost


def bench_concurrent_hooks(dsn: str, processes: int, rounds: int, root: Path) -> dict[str, Any]:
    """``processes`` hook processes at once on one store, ``rounds`` times: p50/p95 of each
    guarded call's wall time, failures, and the decisions seen."""
    work, payload = hook_world(root)
    env = hook_env(root)
    hook_call(work, payload, dsn, env)  # warm the caches, as a session's first call does
    argv = [sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre", "--store", dsn]
    samples: list[float] = []
    failures = 0
    decisions: dict[str, int] = {}
    load_before = os.getloadavg()[0]
    for _ in range(rounds):
        started = {}
        children = []
        for _ in range(processes):
            child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=work, env=env)
            started[child.pid] = time.perf_counter()
            children.append(child)
        for child in children:
            out, err = child.communicate(payload, timeout=300)
            samples.append((time.perf_counter() - started[child.pid]) * 1000)
            failures += child.returncode != 0
            decision = out.strip()[:100]
            if child.returncode != 0:
                # What a non-zero exit said (Claude Code reads exit 2 as a block, with stderr
                # as the reason): the failure's cause goes into the output, not only its count.
                last = (err.strip().splitlines() or [""])[-1][:120]
                decision = f"exit {child.returncode}: {last}"
            decisions[decision] = decisions.get(decision, 0) + 1
    return {**stats([int(ms * 1e6) for ms in samples]), "processes": processes, "rounds": rounds,
            "failures": failures, "decisions": decisions, "loadavg": [load_before, os.getloadavg()[0]]}


def run_postgres(args: argparse.Namespace, jsonl: Path, n_lines: int, dataset: Dataset, rng: random.Random,
                 universe: Universe, tmp: Path) -> dict[str, Any]:
    """The PostgreSQL backend beside raw psycopg doing the same SQL, on the same data, then
    many hook processes at once on that store."""
    import psycopg

    from statewise.store.postgres import PostgresStore, split_schema

    schema = f"sw_bench_{os.getpid()}"
    dsn = args.postgres + ("&" if "?" in args.postgres else "?") + f"schema={schema}"
    store = PostgresStore(dsn)
    out: dict[str, Any] = {"records": len(dataset.active), "schema": schema}
    try:
        started = time.perf_counter()
        with open(jsonl, encoding="utf-8") as handle:
            store.import_jsonl(handle, source=str(jsonl))
        out["import_seconds"] = time.perf_counter() - started
        out["import_lines"] = n_lines
        print(f"\n-- PostgreSQL: Store.import_jsonl of {n_lines:,} lines in {out['import_seconds']:.1f} s "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        raw = psycopg.connect(split_schema(dsn)[0], autocommit=True)
        raw.execute(f'SET search_path TO "{schema}"')
        raw.execute("ANALYZE sw_records")
        results = {
            "retrieve": bench_retrieve(store, raw, rng, universe, args.iterations, args.warmup),
            "get_active": bench_get_active(store, raw, rng, dataset, args.iterations, args.warmup),
            "supersede": bench_supersede(store, raw, rng, dataset, args.supersede_iterations or args.iterations,
                                         args.warmup),
        }
        results["retrieve_rows"] = rows_result(results["retrieve"])
        for result in results.values():
            result["ratio_p50"] = result["statewise"]["p50_ms"] / result["raw"]["p50_ms"]
        out["results"] = results
        print(f"PostgreSQL results ({len(dataset.active):,} active records; ms; ratio = statewise p50 / raw psycopg "
              f"p50; load average {os.getloadavg()[0]:.1f})")
        for op, result in results.items():
            goal = PG_GOALS.get(op)
            verdict = "" if goal is None else f"  ratio<={goal:g}x {'met' if result['ratio_p50'] <= goal else 'MISSED'}"
            print(f"  {op:11} statewise p50 {result['statewise']['p50_ms']:8.3f}  psycopg p50 "
                  f"{result['raw']['p50_ms']:8.3f}  {result['ratio_p50']:5.2f}x{verdict}")
        if args.concurrent_hooks:
            before = raw.execute("SELECT COUNT(*) FROM sw_records").fetchone()[0]
            hooks = bench_concurrent_hooks(dsn, args.concurrent_hooks, args.hook_rounds, tmp / "pg-hooks")
            rows = raw.execute("SELECT id, status, version FROM sw_records").fetchall()
            verify = dict(raw.execute("SELECT from_record, COUNT(*) FROM sw_links WHERE kind = 'verify' "
                                      "GROUP BY from_record").fetchall())
            hooks["records_written"] = len(rows) - before
            hooks["lost_updates"] = audit_lost_updates(rows, verify)
            hooks["duplicate_active"] = raw.execute(
                "SELECT COUNT(*) FROM (SELECT key, scope FROM sw_records WHERE status = 'active' "
                "GROUP BY key, scope HAVING COUNT(*) > 1) AS d").fetchone()[0]
            out["concurrent_hooks"] = hooks
            print(f"{hooks['processes']} concurrent hook processes x {hooks['rounds']} rounds, guarded "
                  f"`git push origin feature` on this PostgreSQL store: p50 {hooks['p50_ms']:.0f} ms, p95 "
                  f"{hooks['p95_ms']:.0f} ms; {hooks['failures']} failed; {hooks['records_written']} records written; "
                  f"lost updates {hooks['lost_updates']}; (key, scope) with two active {hooks['duplicate_active']} "
                  f"(load average {hooks['loadavg'][0]:.1f} -> {hooks['loadavg'][1]:.1f})")
            print("  decisions: " + "; ".join(f"{n} x {d[:140]}" for d, n in hooks["decisions"].items()))
        raw.close()
    finally:
        store.drop()
        store.close()
    return out


def run_size(n_records: int, args: argparse.Namespace) -> dict[str, Any]:
    universe = build_universe(random.Random(args.seed))  # the same users, repositories and branches at every size
    rng = random.Random(args.seed + n_records)
    with tempfile.TemporaryDirectory(prefix="statewise-bench-", dir=args.tmpdir) as tmp:
        path = Path(tmp) / "store.db"
        print(f"\n== {n_records:,} records ({len(universe.scopes):,} scopes with records possible, "
              f"{len(universe.repos):,} repositories, {sum(len(r.branches) for r in universe.repos):,} branches, "
              f"{len(universe.checkouts):,} checkouts, {len(USERS)} users) ==", flush=True)
        store = SQLiteStore(path)  # migrations create the schema
        t0 = time.perf_counter()
        dataset = generate(rng, universe, n_records, store)
        t1 = time.perf_counter()
        load(store, dataset)
        t2 = time.perf_counter()
        store.close()
        db_bytes = path.stat().st_size
        n_links = len(dataset.links)
        distinct_keys = len({key for _, key, _ in dataset.active})
        distinct_scopes = len({scope for _, _, scope in dataset.active})
        print(f"generated {n_records:,} validated records and {len(dataset.links):,} links in {t1 - t0:.1f} s; "
              f"bulk load (executemany, one transaction, indexes, checkpoint) {t2 - t1:.1f} s; "
              f"database file {db_bytes / 2**20:.1f} MiB", flush=True)
        print("statuses: " + ", ".join(f"{k} {v:,}" for k, v in dataset.counts.items())
              + f"; active records cover {distinct_scopes:,} scopes and {distinct_keys:,} distinct keys", flush=True)

        extra: dict[str, Any] = {}
        anchor, extra["anchor_load_seconds"] = build_anchor(Path(tmp) / "anchor.db", active_triples(dataset.rows))
        print(f"anchor (3-column raw schema, benchmarks/store_anchor.py): {len(dataset.active):,} active rows "
              f"loaded in {extra['anchor_load_seconds']:.1f} s", flush=True)
        lg = None
        if args.langgraph:
            lg = open_langgraph(Path(tmp) / "langgraph.db")
            extra["langgraph_load_seconds"] = load_langgraph(lg, [row for row in dataset.rows if row[5] == "active"])
            print(f"LangGraph SqliteStore: put {len(dataset.active):,} active records (it keeps no history) in "
                  f"{extra['langgraph_load_seconds']:.1f} s (batches of 1,000 PutOps)", flush=True)
        n_lines = len(dataset.rows) + len(dataset.links)
        jsonl = Path(tmp) / "export.jsonl"
        pg_here = bool(args.postgres) and n_records == (args.postgres_records or min(args.records))
        if args.imports or pg_here:
            write_jsonl(jsonl, dataset)
        if args.imports:
            extra["import"] = imp = bench_import(Path(tmp), jsonl, n_lines, api=args.api_import)
            print(f"public import of {n_lines:,} lines ({imp['jsonl_mib']:.0f} MiB JSONL, contract key schema): "
                  f"`statewise record import` {imp['cli_seconds']:.1f} s wall, {imp['cli_cpu_seconds']:.1f} s CPU, "
                  f"peak RSS {imp['cli_peak_rss_mib']:.0f} MiB"
                  + (f"; Store.import_jsonl {imp['api_seconds']:.1f} s wall, {imp['api_cpu_seconds']:.1f} s CPU"
                     if "api_seconds" in imp else "")
                  + f" (load average {imp['loadavg'][0]:.1f} -> {imp['loadavg'][1]:.1f})", flush=True)
            if args.api_import:
                load_before = os.getloadavg()[0]
                imp.update(raw_import(Path(tmp), jsonl, n_lines))
                print(f"raw import of the same file (json.loads + executemany, one transaction, benchmarks/"
                      f"store_anchor.py) {imp['raw_seconds']:.1f} s wall, {imp['raw_cpu_seconds']:.1f} s CPU; "
                      f"Store.import_jsonl / raw: {imp['api_seconds'] / imp['raw_seconds']:.2f}x wall, "
                      f"{imp['api_cpu_seconds'] / imp['raw_cpu_seconds']:.2f}x CPU (load average {load_before:.1f} "
                      f"-> {os.getloadavg()[0]:.1f})", flush=True)

        # Only the active (id, key, scope) list is needed from here on. Freeze what is left of
        # the generator's objects so that the collector does not walk this benchmark's own
        # million-row heap during the timed calls (an agent process would not hold it).
        dataset.rows.clear()
        dataset.links.clear()
        gc.collect()
        gc.freeze()
        # Every side reads its own file warm: the paired StateWise and raw calls share one file,
        # so whichever runs first warms the other's pages, while the anchor and LangGraph read
        # theirs alone; after a run has written gigabytes (imports), some files may have left
        # the OS page cache. How long the read took says whether they had.
        warm = [path, Path(tmp) / "anchor.db"] + ([Path(tmp) / "langgraph.db"] if lg is not None else [])
        extra["page_cache_warm_seconds"] = warm_seconds = warm_files(warm)
        print(f"read {len(warm)} database files through the OS page cache before timing in {warm_seconds:.1f} s",
              flush=True)
        store = SQLiteStore(path)
        raw = raw_connection(path)
        try:
            plans = query_plans(raw)
            results: dict[str, Any] = {}
            gc.collect()
            results["retrieve"] = bench_retrieve(store, raw, rng, universe, args.iterations, args.warmup, lg,
                                                 anchor)
            print(f"  retrieve done ({results['retrieve']['rows_per_call']:.0f} rows per call)", flush=True)
            results["retrieve_rows"] = rows_result(results["retrieve"])
            gc.collect()
            results["get_active"] = bench_get_active(store, raw, rng, dataset, args.iterations, args.warmup, lg,
                                                     anchor)
            print("  get_active done", flush=True)
            gc.collect()
            results["supersede"] = bench_supersede(store, raw, rng, dataset,
                                                   args.supersede_iterations or args.iterations, args.warmup, lg,
                                                   anchor)
            print("  supersede done", flush=True)
            profile = profile_retrieve(store, rng, universe, args.profile) if args.profile else None
            breakdown = breakdown_retrieve(store, raw, rng, universe, args.breakdown) if args.breakdown else None
            breakdown_ga = breakdown_get_active(store, rng, dataset, args.breakdown) if args.breakdown else None
        finally:
            store.close()
            raw.close()
            anchor.close()
            if lg is not None:
                lg.conn.close()
            gc.unfreeze()
        if args.hook_calls:
            extra["hook"] = hook = bench_hook(str(path), args.hook_calls, Path(tmp) / "hook")
            print(f"hook, guarded `git push origin feature` (claude-code pre) on this {n_records:,}-record store: "
                  f"p50 {hook['p50_ms']:.0f} ms, p95 {hook['p95_ms']:.0f} ms over {hook['n']} calls "
                  f"(load average {hook['loadavg'][0]:.1f} -> {hook['loadavg'][1]:.1f}); "
                  f"decision {hook['decision'][:80]}",
                  flush=True)
        if pg_here:
            extra["postgres"] = run_postgres(args, jsonl, n_lines, dataset, rng, universe, Path(tmp))

    for result in results.values():
        result["ratio_p50"] = result["statewise"]["p50_ms"] / result["raw"]["p50_ms"]
        result["ratio_ok"] = result["ratio_p50"] <= RATIO_GOAL
    retrieve_p50 = results["retrieve"]["statewise"]["p50_ms"]
    results["retrieve"]["p50_goal_ok"] = retrieve_p50 < RETRIEVE_GOAL_MS if n_records >= RETRIEVE_GOAL_AT else None

    for result in results.values():
        if "langgraph" in result:
            result["ratio_langgraph"] = result["statewise"]["p50_ms"] / result["langgraph"]["p50_ms"]
        if "anchor" in result:
            result["ratio_anchor"] = result["statewise"]["p50_ms"] / result["anchor"]["p50_ms"]
        for side in ("raw", "anchor", "langgraph"):
            if side in result and result[side].get("cpu_p50_ms") and "cpu_p50_ms" in result["statewise"]:
                result[f"cpu_ratio_{side}"] = result["statewise"]["cpu_p50_ms"] / result[side]["cpu_p50_ms"]
    print_table(n_records, results)
    print("query plans (EXPLAIN QUERY PLAN):")
    for label, detail in plans:
        print(f"  {label:22} {detail}")
    if breakdown:
        print(f"where store.retrieve's time goes (p50 ms of each part alone, over {args.breakdown} tasks):")
        for label, value in breakdown:
            print(f"  {label}" if math.isnan(value) else f"  {label:58} {value:8.3f}")
        print(f"where store.get_active's time goes (p50 ms of each part alone, over {args.breakdown} lookups):")
        for label, value in breakdown_ga:
            print(f"  {label:58} {value:8.3f}")
    if profile:
        print(f"cProfile of {args.profile} store.retrieve calls, by own time:\n{profile}")
    return {
        "records": n_records, "links": n_links, "statuses": dataset.counts,
        "generate_seconds": round(t1 - t0, 2), "load_seconds": round(t2 - t1, 2), "db_bytes": db_bytes,
        "active_scopes": distinct_scopes, "active_distinct_keys": distinct_keys,
        "query_plans": dict(plans), "results": results,
        "retrieve_breakdown_p50_ms": {label: value for label, value in breakdown or () if not math.isnan(value)},
        "get_active_breakdown_p50_ms": dict(breakdown_ga or ()),
        **extra,
    }


def warm_files(paths: list[Path]) -> float:
    """Read each file (and its WAL) once from start to end; the seconds it took."""
    started = time.perf_counter()
    for path in paths:
        for name in (path, Path(str(path) + "-wal")):
            if name.exists():
                with open(name, "rb") as handle:
                    while handle.read(1 << 22):
                        pass
    return time.perf_counter() - started


def print_table(n_records: int, results: dict[str, Any]) -> None:
    header = (f"{'operation':11} {'statewise p50':>14} {'raw p50':>10} {'ratio':>7} {'statewise p95':>14} "
              f"{'raw p95':>10} {'statewise mean':>15} {'raw mean':>10}  goals")
    print(f"\nresults at {n_records:,} records (milliseconds; ratio = statewise p50 / raw p50)")
    print(header)
    print("-" * len(header))
    for op, result in results.items():
        lib, raw = result["statewise"], result["raw"]
        goals = [f"ratio<={RATIO_GOAL:g}x {'met' if result['ratio_ok'] else 'MISSED'}"]
        if op == "retrieve":
            verdict = result["p50_goal_ok"]
            if verdict is None:
                goals.append(f"p50<{RETRIEVE_GOAL_MS:g}ms applies at {RETRIEVE_GOAL_AT:,} only "
                             f"({'under' if lib['p50_ms'] < RETRIEVE_GOAL_MS else 'over'})")
            else:
                goals.append(f"p50<{RETRIEVE_GOAL_MS:g}ms {'met' if verdict else 'MISSED'}")
        if "langgraph" in result:
            goals.append(f"LangGraph p50 {result['langgraph']['p50_ms']:.3f} ms, statewise/LangGraph "
                         f"{result['ratio_langgraph']:.2f}x")
        if "anchor" in result:
            goals.append(f"anchor p50 {result['anchor']['p50_ms']:.3f} ms, statewise/anchor "
                         f"{result['ratio_anchor']:.2f}x")
        if "cpu_p50_ms" in lib:
            goals.append("CPU p50 ms: " + ", ".join(
                f"{side} {result[side]['cpu_p50_ms']:.3f}" for side in ("statewise", "raw", "anchor", "langgraph")
                if side in result) + "; statewise/" + ", ".join(
                f"{side} {result[f'cpu_ratio_{side}']:.2f}x" for side in ("raw", "anchor", "langgraph")
                if f"cpu_ratio_{side}" in result))
        print(f"{op:11} {lib['p50_ms']:14.3f} {raw['p50_ms']:10.3f} {result['ratio_p50']:6.2f}x "
              f"{lib['p95_ms']:14.3f} {raw['p95_ms']:10.3f} {lib['mean_ms']:15.3f} {raw['mean_ms']:10.3f}  "
              + "; ".join(goals))
    print(f"({results['retrieve']['statewise']['n']:,} timed iterations each after warm-up; retrieve returned "
          f"{results['retrieve']['rows_per_call']:.1f} rows per call on average, "
          f"{results['retrieve']['records_in_force_per_call']:.1f} of them in force, plus "
          f"{results['retrieve']['near_misses_per_call']:.1f} near misses)")


def print_goals(runs: list[dict[str, Any]]) -> None:
    """Issue 15's goals, each met or not, from this run's figures."""
    print("\n== goals (issue 15) ==")
    for run in runs:
        n, res = run["records"], run["results"]
        line = f"{n:>9,} records:"
        imp = run.get("import")
        if imp:
            line += (f" import {imp['cli_seconds']:.1f} s CLI ({imp['cli_cpu_seconds']:.1f} s CPU)"
                     + (f" / {imp['api_seconds']:.1f} s API ({imp['api_cpu_seconds']:.1f} s CPU)" if "api_seconds"
                        in imp else "") + f", peak RSS {imp['cli_peak_rss_mib']:.0f} MiB"
                     + f", load {imp['loadavg'][0]:.1f}"
                     + (f" (goal <= {IMPORT_GOAL_SECONDS:g} s at 1M: "
                        f"{'met' if imp['cli_seconds'] <= IMPORT_GOAL_SECONDS else 'MISSED'})"
                        if n >= 1_000_000 else "")
                     + f", raw executemany load of the same rows {run['load_seconds']:.1f} s;")
        sup = res["supersede"]["ratio_p50"]
        line += f" supersede {sup:.2f}x raw ({'met' if sup <= RATIO_GOAL else 'MISSED'});"
        ret = res["retrieve"]
        line += f" retrieve {ret['ratio_p50']:.2f}x raw ({'met' if ret['ratio_p50'] <= RATIO_GOAL else 'MISSED'})"
        if "ratio_langgraph" in ret:
            lg_ok = ret["ratio_langgraph"] <= LANGGRAPH_RETRIEVE_GOAL
            line += f", {ret['ratio_langgraph']:.2f}x LangGraph ({'met' if lg_ok else 'MISSED'})"
        line += f" with {ret['near_misses_per_call']:.1f} near misses per call"
        if "hook" in run:
            line += f"; hook p50 {run['hook']['p50_ms']:.0f} ms"
        print(line)
        pg = run.get("postgres")
        if pg:
            parts = [f"{op} {r['ratio_p50']:.2f}x psycopg"
                     + (f" ({'met' if r['ratio_p50'] <= PG_GOALS[op] else 'MISSED'})" if op in PG_GOALS else "")
                     for op, r in pg["results"].items()]
            print(f"{'':>9}   PostgreSQL: " + ", ".join(parts)
                  + f"; Store.import_jsonl (COPY) of {pg['import_lines']:,} lines {pg['import_seconds']:.1f} s")
            hooks = pg.get("concurrent_hooks")
            if hooks:
                print(f"{'':>9}   {hooks['processes']} concurrent hooks: p50 {hooks['p50_ms']:.0f} ms, p95 "
                      f"{hooks['p95_ms']:.0f} ms, {hooks['failures']} failed, {hooks['lost_updates']} lost updates")
    print("\n== goals (issue 27: against the anchor's 3-column raw query, benchmarks/store_anchor.py) ==")
    for run in runs:
        n, res = run["records"], run["results"]
        parts = []
        for op, goal in ANCHOR_GOALS.items():
            if "ratio_anchor" in res[op]:
                ratio = res[op]["ratio_anchor"]
                cpu = res[op].get("cpu_ratio_anchor")
                parts.append(f"{op} {ratio:.2f}x anchor (goal <= {goal:g}x: {'met' if ratio <= goal else 'MISSED'}"
                             + (f"; in CPU time {cpu:.2f}x: {'met' if cpu <= goal else 'MISSED'})" if cpu else ")"))
        ret = res["retrieve"]
        if "ratio_langgraph" in ret:
            ok = ret["ratio_langgraph"] <= LANGGRAPH_RETRIEVE_GOAL
            cpu = ret.get("cpu_ratio_langgraph")
            parts.append(f"retrieve {ret['ratio_langgraph']:.2f}x LangGraph (goal <= {LANGGRAPH_RETRIEVE_GOAL:g}x: "
                         f"{'met' if ok else 'MISSED'}"
                         + (f"; in CPU time {cpu:.2f}x: {'met' if cpu <= LANGGRAPH_RETRIEVE_GOAL else 'MISSED'})"
                            if cpu else ")"))
        light = res.get("retrieve_rows", {})
        if "ratio_anchor" in light:
            parts.append(f"retrieve_rows {light['ratio_anchor']:.2f}x anchor (goal <= {ANCHOR_GOALS['retrieve']:g}x: "
                         f"{'met' if light['ratio_anchor'] <= ANCHOR_GOALS['retrieve'] else 'MISSED'})")
        if "ratio_langgraph" in light:
            parts.append(f"retrieve_rows {light['ratio_langgraph']:.2f}x LangGraph (goal <= "
                         f"{LANGGRAPH_RETRIEVE_GOAL:g}x: "
                         f"{'met' if light['ratio_langgraph'] <= LANGGRAPH_RETRIEVE_GOAL else 'MISSED'})")
        imp = run.get("import") or {}
        if "raw_seconds" in imp:
            ratio = imp["api_seconds"] / imp["raw_seconds"]
            parts.append(f"Store.import_jsonl {ratio:.2f}x the raw import's wall ({imp['api_seconds']:.1f} vs "
                         f"{imp['raw_seconds']:.1f} s; CPU {imp['api_cpu_seconds']:.1f} vs "
                         f"{imp['raw_cpu_seconds']:.1f} s; goal <= {RAW_IMPORT_GOAL:g}x: "
                         f"{'met' if ratio <= RAW_IMPORT_GOAL else 'MISSED'})")
        print(f"{n:>9,} records: " + "; ".join(parts) + ("" if n >= 1_000_000 else " (the goals are set at 1M)"))
    hooks = [(run["records"], run["hook"]["p50_ms"]) for run in runs if "hook" in run]
    if len(hooks) >= 2:
        (small, first), (large, last) = hooks[0], hooks[-1]
        print(f"hook p50 {first:.0f} ms at {small:,} records -> {last:.0f} ms at {large:,} ({last / first:.2f}x; "
              "flat means it does not grow with the store)")


def source_state() -> str:
    """The git commit of the StateWise being measured, and whether its store code differs from it."""
    import subprocess

    import statewise

    root = Path(statewise.__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=10, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=root / "store",
                               capture_output=True, text=True, timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return f"{root} (git unavailable)"
    if not commit:
        return f"{root} (not a git checkout)"
    return f"{root} at commit {commit}, store code {'MODIFIED since that commit' if dirty else 'as committed'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--iterations", type=int, default=2000, help="timed iterations per operation")
    parser.add_argument("--supersede-iterations", type=int, default=None,
                        help="timed supersede iterations (default: --iterations)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed iterations before timing")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--profile", type=int, default=0, metavar="CALLS",
                        help="also cProfile this many store.retrieve calls per size")
    parser.add_argument("--breakdown", type=int, default=0, metavar="CALLS",
                        help="also time the parts of store.retrieve separately over this many tasks")
    parser.add_argument("--tmpdir", default=None, help="where to build the temporary stores")
    parser.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="write the results as JSON")
    parser.add_argument("--no-langgraph", dest="langgraph", action="store_false",
                        help="skip LangGraph's SqliteStore (pip install langgraph-checkpoint-sqlite to run it)")
    parser.add_argument("--no-import", dest="imports", action="store_false",
                        help="skip timing `statewise record import` and Store.import_jsonl")
    parser.add_argument("--no-api-import", dest="api_import", action="store_false",
                        help="time only the CLI import, not Store.import_jsonl as well")
    parser.add_argument("--hook-calls", type=int, default=15,
                        help="guarded hook calls timed per size (0 skips the hook)")
    parser.add_argument("--postgres", default=None, metavar="DSN",
                        help="also run the PostgreSQL backend beside raw psycopg (a fresh schema, dropped after)")
    parser.add_argument("--postgres-records", type=int, default=None,
                        help="the --records size to run PostgreSQL at (default: the smallest)")
    parser.add_argument("--concurrent-hooks", type=int, default=16,
                        help="hook processes run at once on the PostgreSQL store (0 skips)")
    parser.add_argument("--hook-rounds", type=int, default=3, help="rounds of --concurrent-hooks processes")
    args = parser.parse_args(argv)

    machine = {
        "statewise_source": source_state(),
        "nproc": os.cpu_count(), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(), "loadavg_at_start": os.getloadavg(),
    }
    print(f"python {machine['python']}, sqlite {machine['sqlite']}, {machine['nproc']} CPUs, "
          f"{machine['platform']}, load average {machine['loadavg_at_start'][0]:.2f}")
    print("command: python " + " ".join([sys.argv[0], *sys.argv[1:]]))
    print(f"statewise source: {machine['statewise_source']}")
    if args.langgraph:
        try:
            import langgraph.store.sqlite  # noqa: F401
        except ImportError:
            raise SystemExit("LangGraph's SqliteStore is not installed: pip install langgraph-checkpoint-sqlite "
                             "(a benchmark-only dependency), or pass --no-langgraph") from None
    runs = [run_size(n, args) for n in args.records]
    print_goals(runs)
    machine["loadavg_at_end"] = os.getloadavg()
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"machine": machine, "argv": sys.argv[1:], "runs": runs},
                                                  indent=2, default=str) + "\n")
        print(f"\nwrote {args.json_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
