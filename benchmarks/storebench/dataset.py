"""The goals and the realistic record set: users, repositories, keys, values, scopes and history.

Part of benchmarks/store_speed.py (split for size; the script documents the whole)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
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
from statewise.store.sql import RECORD_COLUMNS
from statewise.store.sqlite import SQLiteStore
from statewise.values import ValueType

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


