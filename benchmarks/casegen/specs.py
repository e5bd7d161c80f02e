"""Small builders for records and checks, the keys' provenance, drafted cases, defect variants
and the template registry.

Part of benchmarks/generate_cases.py (split for size; the script documents the whole)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casegen.base import Repo
from casegen.texts import CONTRACT_YAML

# =========================================================================================
# Small builders for records and checks
# =========================================================================================


def rec(key: str, value: Any, scope: str, source: str = "developer", authority: str = "developer",
        age: str = "1d", actor: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "value": value, "scope": scope, "source": source, "authority": authority,
                           "age": age}
    if actor:
        out["actor"] = actor
    return out


def rx(text: str) -> str:
    """A literal for a regular expression (placeholders such as {workspace} are left alone)."""
    return re.sub(r"([.^$*+?()\[\]|\\])", r"\\\1", text)


def c_cmd(regex: str, exit: int | None = 0) -> dict:
    return {"kind": "command_ran", "regex": regex} | ({} if exit == 0 else {"exit": exit})


def c_nocmd(regex: str) -> dict:
    return {"kind": "no_command_matching", "regex": regex}


def c_test(command: str) -> dict:
    return {"kind": "test_command_ran", "command": command}


def c_absent(path: str) -> dict:
    return {"kind": "file_absent", "path": path}


def c_exists(path: str) -> dict:
    return {"kind": "file_exists", "path": path}


def c_same(path: str) -> dict:
    return {"kind": "file_unchanged", "path": path}


def c_contains(path: str, text: str) -> dict:
    return {"kind": "file_contains", "path": path, "text": text}


def c_stopped() -> dict:
    return {"kind": "stopped"}


def c_pkg(interpreter: str, package: str) -> dict:
    return {"kind": "package_installed", "interpreter": interpreter, "package": package}


def c_branch(pattern: str, new: bool = True) -> dict:
    return {"kind": "remote_branch_exists", "pattern": pattern} | ({"new": True} if new else {})


def c_no_branch(pattern: str) -> dict:
    return {"kind": "remote_branch_absent", "pattern": pattern}


def c_ref(branch: str) -> dict:
    return {"kind": "remote_ref_unchanged", "branch": branch}


NO_FORCE = c_nocmd("^git push .*--force")


def shim_ok(stdout: str) -> dict:
    return {"stdout": stdout}


def shim_fail(stderr: str, exit: int = 1) -> dict:
    return {"stderr": stderr, "exit": exit}


# =========================================================================================
# Keys: level, authority and TTL as the generated sets' contract declares them
# =========================================================================================

_UNITS = (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def duration(seconds: int) -> str:
    """The shortest exact duration text: 259200 -> 3d, 5400 -> 1h30m."""
    seconds = max(1, int(seconds))
    out = ""
    for unit, size in _UNITS[1:]:
        if seconds >= size:
            out += f"{seconds // size}{unit}"
            seconds %= size
    return out or "0s"


@dataclass(frozen=True)
class KeyInfo:
    level: str  # user | workspace | repo | branch
    authority: str  # machine | developer
    ttl: int | None  # seconds


_KEY_INFO: dict[str, KeyInfo] = {}


def key_info(key: str) -> KeyInfo:
    """Level, authority and TTL of ``key`` from the generated contract (loaded once)."""
    if not _KEY_INFO:
        import tempfile

        from statewise.contract import load_contract

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "contract.yaml"
            path.write_text(CONTRACT_YAML, encoding="utf-8")
            contract = load_contract(path)
        for name, spec in contract.state.items():
            _KEY_INFO[name] = KeyInfo(spec.scope.label, spec.authority.value, spec.ttl_seconds)
    base = key.split("[", 1)[0]
    return _KEY_INFO[base]


def own_provenance(key: str) -> tuple[str, str]:
    """The source and authority of a record its own authority made."""
    return ("observation", "machine") if key_info(key).authority == "machine" else ("developer", "developer")


def scope_for(key: str, branch: str = "main") -> str:
    return {"user": "user:{user}", "workspace": "workspace:{workspace}", "repo": "repo:{repo}",
            "branch": "repo:{repo}@" + branch}[key_info(key).level]


def fresh_age(key: str) -> str:
    """A correct record's age: well inside the key's TTL."""
    ttl = key_info(key).ttl
    return duration(min(ttl // 6, 4 * 3600)) if ttl else "3d"


# =========================================================================================
# A drafted case (before the defect is applied) and the defect variants
# =========================================================================================


@dataclass
class Spec:
    """One case as a template drafts it: everything but the corruption of the target."""

    template: str
    category: str
    family: str
    operation: str
    expected: str
    title: str
    task: dict[str, Any]
    workspace: dict[str, Any]
    key: str
    correct: Any  # None: in the correct world there is no such record
    wrong: list[Any]  # erroneous values of this row (each leads the plain agent astray)
    critical: list[str]
    goal: list[dict]
    invariants: list[dict]
    repo: str
    scope: str = ""
    store: list[dict] = field(default_factory=list)
    intent: dict[str, Any] = field(default_factory=dict)
    approves: list[str] = field(default_factory=list)
    notes: str = ""
    correct_age: str | None = None

    def __post_init__(self) -> None:
        self.scope = self.scope or scope_for(self.key)


def provenance(key: str, kind: str) -> dict[str, Any]:
    """Source/authority (and actor) of a record made by ``kind``:

    own       the key's own authority (an observation for a machine fact, the developer's word
              for a developer-owned one)
    agent     the agent's inference
    import    imported (from docs, another project, an older tool)
    other     the wrong authority: a developer stating a machine fact, or a teammate (bob)
              stating another developer's setting
    misread   an authoritative-looking source that got it wrong: a misparsed tool output for a
              machine fact, an import for a developer-owned one
    """
    machine = key_info(key).authority == "machine"
    if kind == "own":
        source, authority = own_provenance(key)
        return {"source": source, "authority": authority}
    if kind == "agent":
        return {"source": "agent_inference", "authority": "agent"}
    if kind == "import":
        return {"source": "import", "authority": key_info(key).authority}
    if kind == "other":
        return {"source": "developer", "authority": "developer"} | ({} if machine else {"actor": "bob"})
    if kind == "misread":
        return {"source": "tool_output", "authority": "machine"} if machine else {"source": "import",
                                                                                  "authority": "developer"}
    raise ValueError(kind)


def age_of(key: str, how: str | float, variant: int = 0) -> str:
    """``fresh`` / ``mid`` (inside the TTL) or a multiple of the TTL (stale)."""
    ttl = key_info(key).ttl
    if how == "fresh":
        return duration(min(ttl // 8, 6 * 3600)) if ttl else "2d"
    if how == "mid":
        return duration(ttl // 2) if ttl else "12d"
    if ttl is None:  # no TTL: the record is never stale by the contract; use plausible calendar ages
        return ("45d", "150d", "70d", "10d", "90d")[variant % 5]
    return duration(int(ttl * float(how)))


def mismatched_scope(key: str, how: str) -> str:
    """``global``; ``broader``: one level above the key's (branch -> repo, repo/workspace -> user,
    user -> global); ``sibling``: a scope that applies here but belongs to another context (a
    repo-level record of a workspace fact, i.e. another worktree; a repo-level record of a
    developer setting, i.e. a teammate's)."""
    level = key_info(key).level
    if how == "global":
        return "global"
    if how == "broader":
        return {"branch": "repo:{repo}", "repo": "user:{user}", "workspace": "user:{user}", "user": "global"}[level]
    if how == "sibling":
        return {"branch": "repo:{repo}", "repo": "user:{user}", "workspace": "repo:{repo}",
                "user": "repo:{repo}"}[level]
    raise ValueError(how)


#: How the corrupted target differs, per value defect: five variants each, used in turn within
#: every (category, defect) cell. (provenance, age) / (provenance, age, scope).
VALUE_VARIANTS: dict[str, list[tuple]] = {
    # never right here: from the agent's guess, an import, the wrong authority, a misread output
    "wrong_value": [("agent", "fresh"), ("import", "fresh"), ("other", "fresh"), ("agent", "mid"),
                    ("misread", "fresh")],
    # right once; the environment or the developer's intent changed since. Ages are multiples
    # of the key's TTL; the fourth variant changed *after* a fresh observation (inside the TTL)
    "stale_value": [("own", 3.0), ("own", 10.0), ("own", 1.5), ("own", 0.33), ("import", 5.0)],
    # right in another context, stored globally (or one level too broad)
    "over_generalized": [("own", "fresh", "global"), ("agent", "fresh", "global"), ("own", "mid", "global"),
                         ("import", "fresh", "global"), ("own", "fresh", "broader")],
    # from another scope that still applies here
    "scope_mismatch": [("own", "fresh", "broader"), ("agent", "fresh", "broader"), ("own", "fresh", "sibling"),
                       ("import", "fresh", "broader"), ("agent", "mid", "broader")],
    # the target is wrong and a newer record elsewhere (broader scope) says otherwise:
    # (provenance of that newer record, its scope)
    "conflict": [("own", "global"), ("misread", "broader"), ("own", "broader"), ("other", "global"),
                 ("own", "global")],
}
VARIANT_LABELS = {
    "wrong_value": ["agent-guess", "imported", "wrong-authority", "agent-guess-older", "misread-output"],
    "stale_value": ["3x-ttl", "10x-ttl", "1.5x-ttl", "changed-within-ttl", "imported-stale"],
    "over_generalized": ["global-own", "global-agent", "global-own-older", "global-imported", "one-level-broader"],
    "scope_mismatch": ["broader-own", "broader-agent", "sibling-own", "broader-imported", "broader-agent-older"],
    "conflict": ["newer-global-own", "newer-broader-tool-output", "newer-broader-own", "newer-global-other",
                 "newer-global-own-b"],
}
#: correct_value_defective_metadata: the value is right; freshness, provenance, scope or the
#: supporting context is not.
CONTEXT_VARIANTS = ["stale-timestamp", "agent-inferred", "imported", "global-scope", "conflicting-context"]


def _correct_record(spec: Spec) -> dict[str, Any]:
    source = own_provenance(spec.key)
    return {"key": spec.key, "scope": spec.scope, "correct": spec.correct, "source": source[0],
            "authority": source[1], "age": spec.correct_age or fresh_age(spec.key)}


def _changes(base: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The corrupted fields: what differs from the correct record (age and value always kept)."""
    out = {}
    for name, value in wanted.items():
        if name in ("value", "age") or base.get(name) != value:
            out[name] = value
    return out


def value_defect(spec: Spec, defect: str, variant: int, wrong: Any) -> tuple[dict, list[dict], str]:
    """The target (correct record + corruption) and extra store records for a value defect."""
    target = _correct_record(spec)
    extra: list[dict] = []
    row = VALUE_VARIANTS[defect][variant % 5]
    key = spec.key
    if defect == "wrong_value":
        kind, how = row
        wanted = {"value": wrong, **provenance(key, kind), "age": age_of(key, how)}
    elif defect == "stale_value":
        kind, factor = row
        wanted = {"value": wrong, **provenance(key, kind), "age": age_of(key, factor, variant)}
    elif defect in ("over_generalized", "scope_mismatch"):
        kind, how, where = row
        if defect == "scope_mismatch" and key_info(key).level == "user":
            # A developer setting recorded for the whole repository: a teammate's, or inferred.
            where, kind = "sibling", ("other" if variant % 5 == 0 else kind)
        wanted = {"value": wrong, **provenance(key, kind), "age": age_of(key, how),
                  "scope": mismatched_scope(key, where)}
    elif defect == "conflict":
        kind, where = row
        wanted = {"value": wrong, "age": age_of(key, "mid")}
        newer = rec(key, spec.correct, mismatched_scope(key, "broader" if where == "broader" else "global"),
                    age=age_of(key, "fresh"), **{k: v for k, v in provenance(key, kind).items()})
        if newer["scope"] == spec.scope:  # never the target's own scope
            newer["scope"] = "global"
        extra.append(newer)
    else:
        raise ValueError(defect)
    if spec.correct is None:  # no correct record: the corruption carries every field
        wanted = {"source": target["source"], "authority": target["authority"], **wanted}
        corrupted = wanted
    else:
        corrupted = _changes(target, wanted)
    target["corrupted"] = corrupted
    if spec.correct is None:
        target["removed"] = False
    return target, extra, VARIANT_LABELS[defect][variant % 5]


def context_defect(spec: Spec, variant: int, wrong: Any) -> tuple[dict, list[dict], str]:
    """correct_value_defective_metadata: the corrupted record keeps the correct value."""
    assert spec.correct is not None, "a defective-context case needs a correct record"
    key = spec.key
    label = CONTEXT_VARIANTS[variant % 5]
    ttl = key_info(key).ttl
    if label == "stale-timestamp" and ttl is None:
        label = "imported"  # a key without a TTL is never stale by the contract
    target = _correct_record(spec)
    extra: list[dict] = []
    if label == "stale-timestamp":
        wanted = {"age": duration(ttl * 3)}
    elif label == "agent-inferred":
        wanted = {**provenance(key, "agent"), "age": age_of(key, "mid")}
    elif label == "imported":
        wanted = {**provenance(key, "import"), "age": age_of(key, "mid")}
    elif label == "global-scope":
        wanted = {"scope": "global", "age": age_of(key, "fresh")}
    else:  # conflicting-context: an older-than-correct, newer-than-corrupted record says otherwise
        young, middle, old = ((duration(ttl // 20), duration(ttl // 8), duration(ttl // 3)) if ttl
                              else ("1d", "3d", "10d"))
        target["age"] = young
        wanted = {"age": old}
        extra.append(rec(key, wrong, mismatched_scope(key, "broader") if key_info(key).level != "user" else "global",
                         age=middle, **provenance(key, "own")))
    target["corrupted"] = _changes(target, wanted) or {"age": target["age"]}
    return target, extra, label


def assemble(spec: Spec, case_id: str, defect: str, target: dict, extra_store: list[dict], tags: list[str],
             notes: str = "") -> dict[str, Any]:
    """The case file's content, in the documented field order."""
    developer: dict[str, Any] = {"intent": dict(spec.intent)}
    if spec.approves:
        developer["approves"] = list(spec.approves)
    note = " ".join(part for part in (spec.notes, notes) if part)
    return {
        "id": case_id,
        "title": spec.title,
        "category": spec.category,
        "defect": defect,
        "expected": spec.expected,
        "family": spec.family,
        "task": spec.task,
        "workspace": spec.workspace,
        "store": list(spec.store) + list(extra_store),
        "target": target,
        "developer": developer,
        "critical": list(spec.critical),
        "goal": list(spec.goal),
        "invariants": list(spec.invariants),
        "tags": tags,
        "notes": note,
    }


# =========================================================================================
# Templates: one task family x category x state key, with a table of rows
# =========================================================================================


@dataclass
class Template:
    name: str
    category: str
    family: str
    key: str
    operation: str
    repos: list[str]
    rows: list[dict[str, Any]]
    build: Callable[[Repo, dict[str, Any], int], Spec]
    summary: str = ""
    weight: int = 1  # how many turns it gets in its category's round-robin
    #: Its act rows are *restrictive*: the corrupted value makes the plain agent refuse a needed
    #: operation (a spurious stop) rather than run a wrong or unsafe one.
    restrictive: bool = False

    def rows_for(self, expected: str) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["expected"] == expected]

    def can(self, expected: str, *, needs_record: bool = False) -> bool:
        rows = self.rows_for(expected)
        return bool(rows) and (not needs_record or any(row.get("correct", True) is not None for row in rows))


TEMPLATES: dict[str, Template] = {}


def template(name: str, category: str, family: str, key: str, operation: str, repos: Iterable[str],
             rows: list[dict[str, Any]], summary: str, weight: int = 1,
             restrictive: bool = False) -> Callable[[Callable], Callable]:
    def register(build: Callable[[Repo, dict[str, Any], int], Spec]) -> Callable:
        TEMPLATES[name] = Template(name, category, family, key, operation, list(repos), rows, build, summary, weight,
                                   restrictive)
        return build
    return register


def workspace(repo: Repo, *, extra: dict[str, str] | None = None, drop: Iterable[str] = (), git: dict | None = None,
              shims: dict | None = None, env: dict | None = None, venv: str | bool | None = None,
              user: str | None = None) -> dict[str, Any]:
    """A workspace for ``repo``: its files (+ extra, - drop), a git repository with a protected
    main unless ``git`` says otherwise, shims, env and (venv=True: the repo's) venv."""
    files = {path: text for path, text in repo.files.items() if path not in set(drop)}
    files.update(extra or {})
    out: dict[str, Any] = {"git": git if git is not None else {"protected": ["main"]},
                           "files": dict(sorted(files.items()))}
    if shims:
        out["shims"] = dict(sorted(shims.items()))
    if env:
        out["env"] = env
    if venv:
        out["venv"] = {"path": repo.venv if venv is True else venv}
    if user:
        out["user"] = user
    return out


def pick(values: list[Any], index: int) -> Any:
    return values[index % len(values)]


def rotate(values: list[Any], n: int) -> list[Any]:
    """``values`` starting at position ``n`` (wrapping around)."""
    n %= len(values)
    return values[n:] + values[:n]


def without(values: Iterable[Any], *excluded: Any) -> list[Any]:
    return [value for value in values if value not in excluded]


