"""Check every fact in the agents' memory files against the live workspace.

Each typed fact is verified read-only with the contract's verifiers: a key with a verifier
(a path, an interpreter or tool version, a branch's protection, an npm script) is observed
directly; a command (the test, lint or build command, which only a developer can declare)
is checked through what it claims, as the contract's ``memory.implies`` rules say (``npm
run X`` needs script X, ``make X`` target X, ``pytest tests/unit`` the path). The verdict
per file and line is:

* ``valid``: every observation agrees;
* ``defective``: an observation contradicts the line, with the evidence and, when one can
  be observed, the correct value;
* ``stale?``: nothing holds the line (a path no context folder has) but nothing shows it
  was ever right or what replaced it: a lower severity that does not fail the check;
* ``generated``: the line names build output or local state git ignores (a fresh checkout
  lacks it): never wrong;
* ``unresolved``: nothing could decide it (no verifier, a tool missing, a timeout), with
  what is missing. Unresolved is never counted as valid.

Paths resolve against the context the line gives (:mod:`statewise.memory.paths`); a
script, target or recipe is looked up in the folder the command runs in, else the nearest
parent folder that has the manifest; a Python or Node version is compared with what the
project declares (:mod:`statewise.memory.declared`), never with this machine's interpreter.
``defective`` needs evidence: a manifest that lacks the script, a commit that removed the
path, a declaration the version contradicts, a tool the tree showed when the memory file was
added and shows no more (:mod:`statewise.memory.tools`), a dependency or feature a manifest
declared then and none declares now (:mod:`statewise.memory.manifests`), a count of a folder's
entries that held then (:mod:`statewise.memory.counts`).

With a store, the verdict is also recorded on the line's imported record: a valid fact is
confirmed, a defective one superseded by the observed value (with the evidence as its
lineage) or, when no correct value is known, retracted; that is what makes the line
*known wrong* for the next import and for :func:`statewise.memory.session_context`.
"""

from __future__ import annotations

import itertools
import json
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from statewise.contract import Contract
from statewise.errors import StateWiseError
from statewise.memory.counts import COUNT_KEY, count_facts, judge_count
from statewise.memory.declared import (
    JVM_BUILD_FILES,
    PINNED_RUNTIMES,
    RANGE_KEY,
    WORKFLOW_FILES,
    declared_versions,
    judge_range,
    judge_version,
    range_facts,
)
from statewise.memory.discovery import MemoryFile, discover_memory_files
from statewise.memory.extract import MemoryFact, MemoryLine
from statewise.memory.importer import CHECK_REASON, is_memory_record, parse_reference, read_lines
from statewise.memory.lengths import LENGTH_KEY, judge_length, length_facts
from statewise.memory.links import LINK_KEY, judge_link, link_facts
from statewise.memory.manifests import DECLARED_KEY, declared_facts, judge_declared
from statewise.memory.paths import FOUND as TREE_FOUND
from statewise.memory.paths import GENERATED as TREE_GENERATED
from statewise.memory.paths import UNKNOWN as TREE_UNKNOWN
from statewise.memory.paths import TreeIndex
from statewise.memory.tools import FOUND, GONE, TOOL_KEY, ToolIndex, tool_facts
from statewise.memory.workspaces import filtered_package, workspace_manifests
from statewise.records import Authority, Evidence, SourceKind, check_key, utcnow
from statewise.scopes import Scope, ScopeLevel, TaskScope
from statewise.store.base import Store
from statewise.values import ValueType, check_value, render_value, same_value
from statewise.verifiers import ObservationStatus, VerifierRequest, fill_placeholders, run_verifier, verify_key
from statewise.verifiers.base import Observation
from statewise.workspace import derive_task_scope, git_output

__all__ = ["DEFECTIVE", "GENERATED", "STALE", "UNRESOLVED", "VALID", "CheckReport", "Finding", "SubCheck",
           "check_memory", "render_human", "to_json", "to_sarif"]

VALID, DEFECTIVE, UNRESOLVED = "valid", "defective", "unresolved"
STALE, GENERATED = "stale?", "generated"
_PATH_KEYS = ("fs.exists[", "fs.is_dir[")
_GLOB_KEY = "fs.glob_matches["
_GLOB_CHARS = re.compile(r"[*?\[]")
#: A runner key, the manifest files that declare its names (the first found is read).
_MANIFESTS = {"npm.script_exists[": ("package.json",), "make.target_exists[": ("GNUmakefile", "makefile", "Makefile"),
              "just.recipe_exists[": ("justfile", "Justfile", ".justfile")}
_VENDORED = frozenset({"vendor", "third_party", "third-party", "node_modules"})
_VERSION_KEYS = {"runtime.python_version": "python", "runtime.node_version": "node"}
_HEADING_DIR = re.compile(r"`([^`]+)`|(?<![\w.])((?:[\w@.-]+/)+[\w@.-]*)")
_MAKE_DIR = re.compile(r"^make\s+(?:-C|--directory)[ =]?(?P<dir>[\w./@-]+)\s+(?P<rest>.*)$")
_PNPM_FILTER = re.compile(r"^pnpm\s+(?:-F|--filter)[ =]?(?P<selector>[\w@./*{}^!-]+)\s+(?P<rest>.*)$")
_ACTOR = "statewise.memory.check"
_SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_MAKE_RULE = re.compile(r"^([^\s:#=.][^:=#]*?)[ \t]*::?(?!=)", re.M)  # as the make.target_exists verifier reads it
_CD = re.compile(r"^cd\s+(?P<dir>[\w./@-]+)$")
# a negated sentence states no range ("not Node 16+"), as the contract's not-a-statement rule reads it
_NOT_A_STATEMENT = re.compile(r"(?i)\b(?:no|not|never|don't|do not|doesn't|does not|must not|should not|"
                              r"shouldn't|without|instead of|rather than)\b")
# a line that says the name it gives is generated ("`x.json` is generated by `pnpm docs`": a
# script writes it, a checkout need not have it); "types generated from the spec" is about the
# file's content, not the file
_SAYS_GENERATED = r"`{name}`\s+(?:is|are|gets|get|was|were)\s+(?:auto-?)?generated\b"
_ENV_ASSIGNMENTS = re.compile(r"^(?:[A-Z][A-Z0-9_]*=[^\s=]*\s+)+")  # `CI=true pnpm X` runs `pnpm X`
_COMPOSE_KEY = "compose.file_exists"
_COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")


@dataclass(frozen=True, slots=True)
class SubCheck:
    """One observation behind a verdict: ``key`` should be ``expected``; the verifier said ..."""

    key: str
    expected: Any
    status: str  # valid, defective, unresolved
    observed: Any = None
    detail: str = ""
    workspace: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """The verdict on one fact of one line."""

    file: MemoryFile
    line: int
    text: str
    key: str
    claimed: Any
    scope: str
    status: str
    checks: tuple[SubCheck, ...] = ()
    evidence: tuple[str, ...] = ()
    correct: Any = None
    missing: str = ""
    recorded: str = ""  # what was written to the store: confirmed, superseded, retracted
    fix: tuple[str, str] | None = None  # evidence-backed (old text, new text), e.g. a renamed path

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file.relpath, "path": str(self.file.path), "line": self.line, "text": self.text,
            "agent": self.file.agent, "authority": self.file.authority.value, "key": self.key,
            "claimed": self.claimed, "scope": self.scope, "status": self.status,
            "evidence": list(self.evidence), "correct": self.correct, "missing": self.missing,
            "fix": list(self.fix) if self.fix else None,
            "recorded": self.recorded or None,
            "checks": [{"key": c.key, "expected": c.expected, "status": c.status, "observed": c.observed,
                        "detail": c.detail} for c in self.checks],
        }


@dataclass(frozen=True)
class CheckReport:
    """Every finding, in file and line order, and the files and lines that were read."""

    workspace: Path
    files: tuple[MemoryFile, ...]
    lines: tuple[MemoryLine, ...]
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    root: Path | None = None  # the repository root that relative file names are relative to

    def with_status(self, status: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.status == status]

    @property
    def summary(self) -> dict[str, int]:
        return {"files": len(self.files), "lines": len(self.lines),
                "untyped": sum(1 for line in self.lines if not line.facts), "facts": len(self.findings),
                VALID: len(self.with_status(VALID)), DEFECTIVE: len(self.with_status(DEFECTIVE)),
                STALE: len(self.with_status(STALE)), GENERATED: len(self.with_status(GENERATED)),
                UNRESOLVED: len(self.with_status(UNRESOLVED))}

    @property
    def ok(self) -> bool:
        return not self.with_status(DEFECTIVE)


# --- verification ----------------------------------------------------------------------------


class _Verifier:
    """Verifies facts for one check run, caching task scopes and observations."""

    def __init__(self, contract: Contract, environ: Mapping[str, str] | None, user: str | None,
                 root: Path) -> None:
        self.contract = contract
        self.environ = environ
        self.user = user
        self.root = root
        self.tree = TreeIndex(root)
        self.tools = ToolIndex(self.tree)
        self._tasks: dict[Path, TaskScope] = {}
        self._seen: dict[tuple[str, str, str | None], Observation] = {}

    def task(self, base: Path, branch: str | None = None) -> TaskScope:
        if base not in self._tasks:
            self._tasks[base] = derive_task_scope(base, user=self.user)
        task = self._tasks[base]
        if branch and task.repo:
            return TaskScope(user=task.user, workspace=task.workspace, repo=task.repo, branch=branch)
        return task

    def observe(self, key: str, base: Path, branch: str | None = None) -> Observation:
        slot = (key, str(base), branch)
        if slot not in self._seen:
            self._seen[slot] = verify_key(self.contract, key, self.task(base, branch), base, environ=self.environ)
        return self._seen[slot]

    def sub_check(self, key: str, expected: Any, base: Path, branch: str | None = None) -> SubCheck:
        observation = self.observe(key, base, branch)
        key_type = self.contract.key_type(key)
        if observation.status is ObservationStatus.UNAVAILABLE or key_type is None:
            return SubCheck(key, expected, UNRESOLVED, None, observation.detail or "unavailable", str(base))
        if observation.status is ObservationStatus.ABSENT:
            return SubCheck(key, expected, DEFECTIVE, None, observation.detail or "absent", str(base))
        agrees = _agrees(expected, observation.value, key_type.value_type)
        return SubCheck(key, expected, VALID if agrees else DEFECTIVE, observation.value, observation.detail, str(base))

    def correction(self, key: str, base: Path) -> Any:
        """The correct value of a defective developer-declared key, when the contract says how
        to observe one (``memory.corrections``); None otherwise."""
        spec = self.contract.memory.corrections.get(key)
        key_type = self.contract.key_type(key)
        if spec is None or key_type is None:
            return None
        task = self.task(base)
        try:
            args = fill_placeholders(spec, workspace=str(base), branch=task.branch, repo=task.repo, user=task.user,
                                     qualifier=None)
        except StateWiseError:
            return None
        request = VerifierRequest(key=key, qualifier=None, value_type=key_type.value_type, choices=key_type.choices,
                                  args=args, workspace=base, task=task, timeout=float(spec.timeout),
                                  environ=self.environ)
        observation = run_verifier(spec, request)
        return observation.value if observation.observed else None


def _agrees(claimed: Any, observed: Any, value_type: ValueType) -> bool:
    """Whether an observation bears out a claim; a version claim ``3.11`` holds for ``3.11.7``."""
    if value_type is ValueType.VERSION and isinstance(claimed, str) and isinstance(observed, str):
        want = claimed.removeprefix("v").split(".")
        have = observed.removeprefix("v").split(".")
        return have[: len(want)] == want
    return same_value(claimed, observed, value_type)


def _fact_base(file: MemoryFile, fact: MemoryFact) -> Path:
    scope = Scope.parse(fact.scope)
    if scope.level is ScopeLevel.WORKSPACE and file.kind in ("nested", "parent"):
        return Path(scope.name)
    return file.base


def _implied(contract: Contract, command: str, base: Path,
             package: Callable[[str], Path | None] | None = None,
             root: Path | None = None) -> list[tuple[str, Any, Path, bool]]:
    """What ``command`` claims about the workspace, by the contract's ``memory.implies`` rules:
    (key, value, the folder it runs in, whether the name may be a dependency's binary).
    ``package`` finds the folder of the workspace package a ``pnpm --filter`` names; a ``cd``
    that names no folder of ``base`` but one of ``root`` moves there (a nested memory file that
    says `cd src/x/infra` from the repository root)."""
    claims: list[tuple[str, Any, Path, bool]] = []
    here = base
    for segment in _SEGMENT_SPLIT.split(command.strip()):
        segment = _ENV_ASSIGNMENTS.sub("", segment.strip().removeprefix("$ ").strip())
        if not segment:
            continue
        make_dir = _MAKE_DIR.match(segment)
        if make_dir:  # make -C DIR target: the target of DIR's Makefile
            claims.append((f"fs.is_dir[{make_dir.group('dir')}]", True, here, False))
            segment = "make " + make_dir.group("rest")
            inner = _implied(contract, segment, here / make_dir.group("dir"), package, root)
            claims.extend(claim for claim in inner if claim not in claims)
            continue
        filtered = _PNPM_FILTER.match(segment)
        if filtered:  # pnpm -F PKG X: X in that package's folder (nothing to check if none is one)
            folder = package(filtered.group("selector")) if package is not None else None
            if folder is not None:
                inner = _implied(contract, "pnpm " + filtered.group("rest"), folder, package, root)
                claims.extend(claim for claim in inner if claim not in claims)
            continue
        cd = _CD.match(segment)
        if cd:
            target = cd.group("dir")
            claims.append((f"fs.is_dir[{target}]", True, here, False))
            rooted = root is not None and here != root and not (here / target).is_dir() and (root / target).is_dir()
            here = root / target if rooted and root is not None else here / target
            continue
        for rule in contract.memory.implies:
            for match in re.finditer(rule.command, segment):
                groups = {k: v for k, v in match.groupdict().items() if v}
                wanted = re.findall(r"\{(\w+)\}", rule.key)
                if any(name not in groups for name in wanted):
                    continue  # a placeholder the match leaves unfilled (a glob's own {a,b} is not one)
                key = rule.key
                for name in wanted:
                    key = key.replace("{" + name + "}", groups[name])
                try:
                    check_key(key)
                except StateWiseError:
                    continue
                if contract.key_type(key) is not None and not any(c[:3] == (key, rule.value, here) for c in claims):
                    claims.append((key, rule.value, here, rule.may_be_binary))
    # `make a/b` names a target (or several, a/b shorthand), not a path to look for as well
    targets = {_qualifier(c[0]) for c in claims if c[0].startswith("make.target_exists[")}
    return [c for c in claims if not (c[0].startswith("fs.exists[") and _qualifier(c[0]) in targets)]


def _evidence_hint(check: SubCheck) -> str:
    """A line that helps a person fix a defect: what does exist instead (read-only file reads)."""
    base = Path(check.workspace)
    if check.key.startswith("npm.script_exists["):
        try:
            scripts = json.loads((base / "package.json").read_text(encoding="utf-8")).get("scripts", {})
        except (OSError, ValueError, AttributeError):
            return f"{base / 'package.json'} cannot be read"
        return f"package.json scripts: {', '.join(sorted(scripts)) or 'none'}"
    if check.key.startswith("make.target_exists["):
        for name in ("GNUmakefile", "makefile", "Makefile"):
            try:
                text = (base / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            targets = {t for m in _MAKE_RULE.finditer(text) for t in m.group(1).split()}
            return f"{name} targets: {', '.join(sorted(targets)) or 'none'}"
        return f"{base} has no Makefile"
    return ""


def _verdict(checks: Sequence[SubCheck]) -> str:
    if any(c.status == DEFECTIVE for c in checks):
        return DEFECTIVE
    if any(c.status == STALE for c in checks):
        return STALE
    if checks and all(c.status in (VALID, GENERATED) for c in checks):
        return GENERATED if all(c.status == GENERATED for c in checks) else VALID
    return UNRESOLVED


def _describe(check: SubCheck) -> str:
    observed = "absent" if check.observed is None else render_value(check.observed)
    return f"{check.key}: expected {render_value(check.expected)}, observed {observed} ({check.detail})"


def _qualifier(key: str) -> str:
    return key[key.index("[") + 1: -1] if "[" in key and key.endswith("]") else ""


def _context_folders(verifier: _Verifier, line: MemoryLine, here: Path) -> list[str]:
    """Where a name on ``line`` may be relative to, nearest first: the folder the command runs
    in, folders the section's heading or the line itself names, the memory file's own
    folder, the root."""
    tree = verifier.tree
    folders = [tree.relative(here)]
    for given in line.context:  # a tree listing's root, from the memory file's folder or the root
        for base in (tree.relative(line.file.base), ""):
            candidate = f"{base}/{given}" if base else given
            if tree.exists(candidate) and (verifier.root / candidate).is_dir():
                folders.append(candidate)
    named = [m for text in (line.heading, line.text) for m in _HEADING_DIR.finditer(text)]
    for match in named:
        name = (match.group(1) or match.group(2) or "").strip().rstrip("/").removeprefix("./")
        for base in (tree.relative(line.file.base), ""):
            candidate = f"{base}/{name}" if base else name
            if name and tree.exists(candidate) and (verifier.root / candidate).is_dir():
                folders.append(candidate)
    folders += [tree.relative(line.file.base), ""]
    return list(dict.fromkeys(folders))


def _path_check(verifier: _Verifier, line: MemoryLine, key: str, here: Path) -> SubCheck:
    """A path claim, resolved against the line's context (see :mod:`statewise.memory.paths`)."""
    name = _qualifier(key)
    folders = _context_folders(verifier, line, here)
    tree = verifier.tree
    # a tree listing whose root is a folder of the tree names each entry's full path: no
    # other file that happens to end with the name stands in for it
    listed = any(f in folders for given in line.context for f in (given, f"{tree.relative(line.file.base)}/{given}"))
    found = tree.locate(name, folders, anywhere=False)
    folder_named = name.strip().endswith("/")  # `cli/`: a folder, not a file that moved deeper
    if found is None and not listed and not (
            folder_named and tree.removal(name, folders, _since_file(verifier, line), exact=True) is not None):
        # a name some file of the tree ends with counts as found, unless it names a folder the
        # history shows removed where the line puts it since the memory file was added (client/
        # that moved below clients/: another folder that ends with the name is not what the
        # line meant); a file that moved deeper is still found, as a reader would
        found = tree.locate(name, folders, anywhere=True)
    if found is not None:
        return SubCheck(key, True, VALID, True, found.detail, str(here))
    ignored = tree.ignored(name, folders)
    if ignored:
        return SubCheck(key, True, GENERATED, None, f"{ignored} is git-ignored: build output or local state",
                        str(here))
    if re.search(_SAYS_GENERATED.format(name=re.escape(name)), line.text, re.IGNORECASE):
        return SubCheck(key, True, GENERATED, None, f"{name}: the line says it is generated", str(here))
    removed = tree.removal(name, folders, _since_file(verifier, line)) or tree.removal_before(name, folders)
    if removed is not None:
        renamed = removed.renamed_to
        stem = posixpath.normpath(name.removeprefix("./").rstrip("/"))
        prefix = removed.where[: len(removed.where) - len(stem)] if removed.where.endswith(stem) else ""
        if renamed and prefix and renamed.startswith(prefix):
            renamed = renamed[len(prefix):]  # said relative to the same folder the line used
        return SubCheck(key, True, DEFECTIVE, renamed or None, removed.detail, str(here))
    moved = tree.relocated(name, folders)
    if moved is not None:  # the tree holds it, at one other place under the folder the line names
        return SubCheck(key, True, DEFECTIVE, moved.renamed_to, f"{name}: {moved.detail}", str(here))
    misnamed = tree.misnamed(name, folders)
    if misnamed is not None:  # never in the history, beside the tree's plural (or singular) of it
        return SubCheck(key, True, DEFECTIVE, misnamed.renamed_to, f"{name}: no commit ever had it; the tree has "
                        f"{misnamed.where}", str(here))
    respelled = tree.respelled(name, folders)
    if respelled is not None:  # never in the history; the tree has it spelled as folders
        return SubCheck(key, True, DEFECTIVE, respelled.renamed_to, f"{name}: no commit ever had it; the tree has "
                        f"{respelled.where}", str(here))
    gone = tree.folder_removal(name, folders, _since_file(verifier, line))
    if gone is not None:  # the folder the name lies in is gone: no new name is known for the file itself
        return SubCheck(key, True, DEFECTIVE, None, f"{name}: its folder {gone.detail}", str(here))
    return SubCheck(key, True, STALE, None, f"no context folder ({', '.join(f or '.' for f in folders)}) has "
                    f"{name}, and no commit since the memory file was added removed it", str(here))


def _glob_check(verifier: _Verifier, line: MemoryLine, key: str, here: Path) -> SubCheck:
    """A glob (``packages/*/src/experimental/``): something in the tree must match it, from
    the line's context folders; with no match, git-ignored output is generated, a match the
    history shows removed is the evidence of a defect, and nothing else is only stale?."""
    pattern = _qualifier(key)
    folders = _context_folders(verifier, line, here)
    tree = verifier.tree
    # a glob that nothing matches from a context folder may name files below a folder the
    # line leaves open (`pnpm -C <package> test "test/*.test.js"`): any folder is then a reading
    found = tree.glob_matches(pattern, folders) or tree.glob_matches(pattern, folders, anywhere=True)
    if found is not None:
        return SubCheck(key, True, VALID, True, f"matches {found.where}", str(here))
    literal = "/".join(itertools.takewhile(lambda part: not _GLOB_CHARS.search(part), pattern.split("/")))
    ignored = tree.ignored(literal, folders) if literal else ""
    if ignored:
        return SubCheck(key, True, GENERATED, None, f"{ignored} is git-ignored: build output or local state",
                        str(here))
    removed = tree.glob_removal(pattern, folders, _since_file(verifier, line))
    if removed is not None:
        return SubCheck(key, True, DEFECTIVE, None, f"{pattern} matched {removed.detail}", str(here))
    return SubCheck(key, True, STALE, None, f"nothing in the tree matches {pattern} from a context folder "
                    f"({', '.join(f or '.' for f in folders)}), and no commit since the memory file was added "
                    "removed a match", str(here))


def _since_file(verifier: _Verifier, line: MemoryLine) -> str:
    return _since_file_of(verifier, line.file.path)


def _since_file_of(verifier: _Verifier, path: Path) -> str:
    """The memory file's path relative to the root, as git's history names it."""
    folder = verifier.tree.relative(path.parent)
    return f"{folder}/{path.name}" if folder else path.name


def _manifest_check(verifier: _Verifier, line: MemoryLine, key: str, expected: Any, here: Path,
                    names: tuple[str, ...]) -> SubCheck:
    """A script, target or recipe, read from the manifest of the folder the command runs in,
    else of the nearest parent (up to the root) or a folder the section names."""
    root = verifier.root.resolve()
    chain: list[Path] = []
    folder = here.resolve()
    while True:
        chain.append(folder)
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    # the nearest folder with the manifest is the one the runner reads (just and npm upwards);
    # a folder the text names is the other reading. make reads only the Makefile of the folder
    # it runs in, which a line with no `cd` or `-C` does not name: every Makefile from the
    # memory file's folder up to the root is then a reading, nearest first
    nearest = [f for f in chain if any((f / name).is_file() for name in names)]
    unnamed = here.resolve() == line.file.path.parent.resolve()
    if not (unnamed and names == _MANIFESTS["make.target_exists["]):
        nearest = nearest[:1]
    named = [root / f for f in _context_folders(verifier, line, here)[1:] if f]
    holders = [f for f in dict.fromkeys(nearest + named) if any((f / name).is_file() for name in names)]
    if not holders:
        return SubCheck(key, expected, UNRESOLVED, None, f"no {' or '.join(names)} in {here} or its parents",
                        str(here))
    checks = [verifier.sub_check(key, expected, holder) for holder in holders]
    for check in checks:
        if check.status == VALID:
            return check
    return checks[0]


def _script_history(verifier: _Verifier, line: MemoryLine, check: SubCheck, names: tuple[str, ...]) -> SubCheck:
    """A bare ``pnpm X`` the manifest lacks: X may be a dependency's binary, so it is wrong only
    when the manifest declared it when the memory file was added (and a commit since removed
    it); without that evidence it is stale?."""
    name = _qualifier(check.key)
    tree = verifier.tree
    folder = tree.relative(Path(check.workspace))
    since = _since_file(verifier, line)
    added = tree.added_commit(since)
    for manifest in names:
        text = tree.file_at(added, f"{folder}/{manifest}" if folder else manifest) if added else None
        if text is None:
            continue
        try:
            scripts = json.loads(text).get("scripts") or {}
        except (ValueError, AttributeError):
            continue
        if isinstance(scripts, dict) and name in scripts:
            return replace(check, detail=f"{check.detail}; {manifest} declared script {name} at {added[:10]}, "
                                         "when the memory file was added")
    member = _workspace_script(verifier, name)
    if member:
        return replace(check, status=VALID, observed=True, detail=f"workspace package {member} declares script {name}")
    return replace(check, status=STALE, detail=f"{check.detail}; {name} may be a dependency's binary, and "
                                               f"{names[0]} had no script {name} when the memory file was added")


def _workspace_script(verifier: _Verifier, name: str) -> str:
    """The first workspace package (package.json ``workspaces``, pnpm-workspace.yaml
    ``packages``) whose package.json declares script ``name`` ("" when none does): a bare
    ``pnpm X`` in a package's folder runs it there."""
    root = verifier.root
    for manifest in workspace_manifests(root, verifier.tree):
        try:
            scripts = json.loads((root / manifest).read_text(encoding="utf-8")).get("scripts") or {}
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(scripts, dict) and name in scripts:
            return manifest
    return ""


def _make_shorthand(verifier: _Verifier, line: MemoryLine, check: SubCheck, here: Path,
                    names: tuple[str, ...]) -> SubCheck:
    """``make format/lint/typecheck`` is prose shorthand for three targets when the Makefile has
    no target of that name but has each part."""
    parts = _qualifier(check.key).split("/")
    if check.status != DEFECTIVE or len(parts) < 2 or not all(parts):
        return check
    each = [_manifest_check(verifier, line, f"make.target_exists[{part}]", True, here, names) for part in parts]
    if all(c.status == VALID for c in each):
        return replace(check, status=VALID, observed=True,
                       detail=f"targets {', '.join(parts)} exist (a/b/c names several targets)")
    return check


def _listed_versions(claimed: str, text: str) -> list[str]:
    """``claimed`` and the versions listed right after it on the line ("v18, v20, or v22"): a
    list claims each of them."""
    separator = r"\s*(?:,|/|\bor\b|\band\b)\s*(?:or\s+|and\s+)?"
    found = re.search(r"(?<![\w.])v?" + re.escape(claimed)
                      + r"(?P<rest>(?:" + separator + r"v?\d+(?:\.\d+)*(?![\d.+*x]))*)", text)
    rest = re.findall(r"v?(\d+(?:\.\d+)*)", found.group("rest")) if found else []
    return [claimed, *rest]


def _version_check(verifier: _Verifier, key: str, claimed: Any, runtime: str, text: str = "") -> SubCheck:
    """A version claim against what the project declares, never this machine's interpreter; a
    list of versions ("v18, v20, or v22") claims each one is supported."""
    declarations = declared_versions(verifier.root, runtime)
    verdicts = [judge_version(version, declarations) for version in _listed_versions(str(claimed), text)]
    verdict = False if False in verdicts else None if None in verdicts else True
    stated = "; ".join(f"{d.source}: {d.text}" for d in declarations)
    if verdict is None:
        detail = stated or f"the project declares no {runtime} version (requires-python, .python-version, .nvmrc, " \
                           "engines, .tool-versions)"
        return SubCheck(key, claimed, UNRESOLVED, None, detail, str(verifier.root))
    return SubCheck(key, claimed, VALID if verdict else DEFECTIVE, None, f"declared: {stated}", str(verifier.root))


def _sub_check(verifier: _Verifier, line: MemoryLine, key: str, expected: Any, here: Path,
               branch: str | None = None, *, or_binary: bool = False) -> SubCheck:
    if key.startswith(_PATH_KEYS) and expected is True:
        return _path_check(verifier, line, key, here)
    if key.startswith(_GLOB_KEY) and expected is True:
        return _glob_check(verifier, line, key, here)
    for prefix, names in _MANIFESTS.items():
        if key.startswith(prefix):
            check = _manifest_check(verifier, line, key, expected, here, names)
            check = _make_shorthand(verifier, line, check, here, names) if prefix == "make.target_exists[" else check
            return _script_history(verifier, line, check, names) if or_binary and check.status == DEFECTIVE else check
    if key in _VERSION_KEYS:
        return _version_check(verifier, key, expected, _VERSION_KEYS[key], line.text)
    if key == _COMPOSE_KEY and expected is True:
        return _compose_check(verifier, line, here)
    return verifier.sub_check(key, expected, here, branch)


def _compose_check(verifier: _Verifier, line: MemoryLine, here: Path) -> SubCheck:
    """``docker compose up`` run in ``here`` reads its Compose file: defective when the folder
    has none and a commit since the memory file was added removed the one it had."""
    check = verifier.sub_check(_COMPOSE_KEY, True, here)
    if check.status != DEFECTIVE:
        return check
    folder = verifier.tree.relative(here)
    for name in _COMPOSE_FILES:
        removed = verifier.tree.removal(name, [folder], _since_file(verifier, line), exact=True)
        if removed is not None:
            moved = f", now {removed.renamed_to}" if removed.renamed_to else ""
            return replace(check, detail=f"{check.detail}; {removed.detail}{moved}")
    return replace(check, status=STALE, detail=f"{check.detail}; no commit since the memory file was added removed one")


def _verified_correction(verifier: _Verifier, key: str, base: Path, line: MemoryLine) -> Any:
    """The observed correct command, only when what it claims holds in the same folder."""
    correct = verifier.correction(key, base)
    if not isinstance(correct, str):
        return None
    claims = _implied(verifier.contract, correct, base)
    if not claims or any(_sub_check(verifier, line, k, e, h, or_binary=b).status != VALID for k, e, h, b in claims):
        return None
    return correct


def _tool_check(verifier: _Verifier, line: MemoryLine, key: str) -> SubCheck:
    """A tool the line says the project uses (:mod:`statewise.memory.tools`): defective only
    when the tree showed it when the memory file was added and shows it no more."""
    name = _qualifier(key)
    found = verifier.tools.judge(name, _since_file(verifier, line))
    if found is None:
        return SubCheck(key, True, UNRESOLVED, None, f"{name} is not a tool this check knows", str(verifier.root))
    status = VALID if found.kind == FOUND else DEFECTIVE if found.kind == GONE else STALE
    return SubCheck(key, True, status, True if status == VALID else None, f"{name}: {found.detail}",
                    str(verifier.root))


def _declared_check(verifier: _Verifier, line: MemoryLine, key: str) -> SubCheck:
    """A dependency or feature the line says a manifest declares (:mod:`statewise.memory.manifests`):
    defective only when a manifest declared it when the memory file was added and none does now."""
    verdict, detail = judge_declared(verifier.tree, key, _since_file(verifier, line))
    status = UNRESOLVED if verdict is None else VALID if verdict else DEFECTIVE
    return SubCheck(key, True, status, True if verdict else None, detail, str(verifier.root))


def _range_facts(line: MemoryLine) -> tuple[MemoryFact, ...]:
    """The runtime ranges ``line`` says the project supports ("Ruby 3.2.0+ required"), as
    ``project.supports_runtime[RUNTIME]`` facts; a user's own memory file speaks of no project."""
    if line.file.kind in ("user", "auto", "parent") or re.search(_NOT_A_STATEMENT, line.text):
        return ()
    return tuple(MemoryFact(key=f"{RANGE_KEY}{runtime}]", value=claimed, value_type=ValueType.STRING,
                            scope=line.file.scope, rule="runtime_range") for runtime, claimed in range_facts(line.text))


def _range_check(verifier: _Verifier, line: MemoryLine, key: str, claimed: str) -> SubCheck:
    """A supported range against the one the project declares (never this machine's runtime)."""
    runtime = _qualifier(key)
    patterns = JVM_BUILD_FILES if runtime == "jvm" else WORKFLOW_FILES if runtime == "bun" else ()
    declarations = declared_versions(verifier.root, runtime,
                                     [f for pattern in patterns for f in verifier.tree.matching(pattern)])
    # a pinned runtime ("Bun 1.2.11") is a version, held as "Python 3.12" is
    verdict = (judge_version(claimed, declarations) if runtime in PINNED_RUNTIMES
               else judge_range(claimed, declarations, runtime))
    stated = "; ".join(dict.fromkeys(f"{d.source}: {d.text}" for d in declarations))
    status = UNRESOLVED if verdict is None else VALID if verdict else DEFECTIVE
    detail = f"declared: {stated}" if stated else f"the project declares no {runtime} range"
    return SubCheck(key, claimed, status, None, detail, str(verifier.root))


def _count_check(verifier: _Verifier, line: MemoryLine, key: str, claimed: str) -> SubCheck:
    """A count of a folder's entries (:mod:`statewise.memory.counts`): defective only when it
    held when the memory file was added; a folder the tree lacks is the path rules' business."""
    found = judge_count(verifier.tree, _qualifier(key), claimed, _since_file(verifier, line))
    if found.holds is None:
        return SubCheck(key, claimed, UNRESOLVED, None, f"{_qualifier(key)} is not a folder of the tree",
                        str(verifier.root))
    status = VALID if found.holds else DEFECTIVE if found.held else STALE
    return SubCheck(key, claimed, status, str(found.now), found.detail, str(verifier.root))


def _link_check(verifier: _Verifier, line: MemoryLine, key: str) -> SubCheck:
    """A Markdown link target (:mod:`statewise.memory.links`), followed from the memory file's folder."""
    found = judge_link(verifier.tree, _qualifier(key), verifier.tree.relative(line.file.path.parent),
                       _since_file(verifier, line))
    status = {TREE_FOUND: VALID, TREE_GENERATED: GENERATED, TREE_UNKNOWN: STALE}.get(found.kind, DEFECTIVE)
    return SubCheck(key, True, status, True if status == VALID else None, found.detail, str(verifier.root))


def _length_check(verifier: _Verifier, line: MemoryLine, key: str, claimed: str) -> SubCheck:
    """A file's length in lines (:mod:`statewise.memory.lengths`): defective only when it held
    when the memory file was added; a file the tree lacks is the path rules' business."""
    found = judge_length(verifier.tree, _qualifier(key), _context_folders(verifier, line, line.file.base), claimed,
                         _since_file(verifier, line))
    if not found.where:
        return SubCheck(key, claimed, UNRESOLVED, None, f"{_qualifier(key)} is not a file of the tree",
                        str(verifier.root))
    status = VALID if found.holds else DEFECTIVE if found.held else STALE
    return SubCheck(key, claimed, status, str(found.now), found.detail, str(verifier.root))


def _check_fact(verifier: _Verifier, line: MemoryLine, fact: MemoryFact) -> Finding:
    contract = verifier.contract
    if fact.key.startswith((TOOL_KEY, DECLARED_KEY, RANGE_KEY, COUNT_KEY, LINK_KEY, LENGTH_KEY)):
        check = (_tool_check(verifier, line, fact.key) if fact.key.startswith(TOOL_KEY)
                 else _declared_check(verifier, line, fact.key) if fact.key.startswith(DECLARED_KEY)
                 else _range_check(verifier, line, fact.key, str(fact.value)) if fact.key.startswith(RANGE_KEY)
                 else _link_check(verifier, line, fact.key) if fact.key.startswith(LINK_KEY)
                 else _length_check(verifier, line, fact.key, str(fact.value)) if fact.key.startswith(LENGTH_KEY)
                 else _count_check(verifier, line, fact.key, str(fact.value)))
        return Finding(file=line.file, line=line.number, text=line.text, key=fact.key, claimed=fact.value,
                       scope=fact.scope, status=check.status, checks=(check,), evidence=(_describe(check),),
                       missing=f"{check.key}: {check.detail}" if check.status in (UNRESOLVED, STALE) else "")
    base = _fact_base(line.file, fact)
    scope = Scope.parse(fact.scope)
    branch = scope.branch if scope.level is ScopeLevel.BRANCH else None
    finding = Finding(file=line.file, line=line.number, text=line.text, key=fact.key, claimed=fact.value,
                      scope=fact.scope, status=UNRESOLVED)
    direct = (contract.verifier_for(fact.key) is not None or fact.key in _VERSION_KEYS
              or fact.key.startswith(_PATH_KEYS + (_GLOB_KEY,) + tuple(_MANIFESTS)))
    if direct:
        check = _sub_check(verifier, line, fact.key, fact.value, base, branch)
        checks = [check]
        # a correct value only from evidence: a path's new name, an observed machine fact;
        # never a version (a claim about the project is not repaired from this machine)
        correct = (check.observed if check.status == DEFECTIVE and fact.key not in _VERSION_KEYS
                   and check.observed is not None and not fact.key.startswith(_PATH_KEYS) else None)
        if check.status == DEFECTIVE and fact.key.startswith(_PATH_KEYS) and isinstance(check.observed, str):
            finding = replace(finding, fix=(_qualifier(fact.key), check.observed))
    else:
        if not isinstance(fact.value, str):
            return replace(finding, missing=f"the contract gives {fact.key} no verifier; a developer must confirm it")
        claims = _implied(contract, fact.value, base,
                          lambda selector: filtered_package(verifier.root, verifier.tree, selector), verifier.root)
        if not claims:
            return replace(finding, missing=(f"the contract gives {fact.key} no verifier and `{fact.value}` names no "
                                             "npm script, make or just target, or path that can be checked"))
        checks = [_sub_check(verifier, line, key, expected, here, or_binary=binary)
                  for key, expected, here, binary in claims]
        correct = _verified_correction(verifier, fact.key, base, line) if _verdict(checks) == DEFECTIVE else None
        if correct is not None and same_value(correct, fact.value, fact.value_type):
            correct = None
    status = _verdict(checks)
    evidence = [_describe(c) for c in checks if c.status != VALID or status == VALID]
    evidence += [hint for c in checks if c.status == DEFECTIVE for hint in [_evidence_hint(c)] if hint]
    missing = ("; ".join(f"{c.key}: {c.detail}" for c in checks if c.status in (UNRESOLVED, STALE))
               if status in (UNRESOLVED, STALE) else "")
    return replace(finding, status=status, checks=tuple(checks), evidence=tuple(evidence), correct=correct,
                   missing=missing)


# --- recording in the store ------------------------------------------------------------------------


def _record(store: Store, finding: Finding, digest: str) -> str:
    """Write the verdict onto the line's imported record; return what was written."""
    record = store.get_active(finding.key, finding.scope)
    if record is None or not is_memory_record(record) or record.value != finding.claimed:
        return ""
    reference = parse_reference(record.provenance.reference)
    if reference is None or reference.digest != digest or finding.status not in (VALID, DEFECTIVE):
        return ""  # unresolved, stale? and generated say nothing the store could keep
    detail = "; ".join(finding.evidence)[:900]
    now = utcnow()
    try:
        if finding.status == VALID:
            evidence = Evidence(key=record.key, value=record.value, value_type=record.value_type, scope=record.scope,
                                source=SourceKind.OBSERVATION, authority=Authority.MACHINE, actor=_ACTOR,
                                observed_at=now, detail=detail)
            store.confirm(record.id, evidence, expected_version=record.version)
            return "confirmed"
        if finding.correct is not None:
            check_value(finding.correct, record.value_type, key=record.key)
            evidence = Evidence(key=record.key, value=finding.correct, value_type=record.value_type,
                                scope=record.scope, source=SourceKind.OBSERVATION, authority=Authority.MACHINE,
                                actor=_ACTOR, observed_at=now, detail=detail,
                                reference=f"{finding.file.relpath}:{finding.line}")
            store.supersede(record.id, evidence, expected_version=record.version,
                            reason=f"{CHECK_REASON}: {finding.file.relpath}:{finding.line}")
            return "superseded"
        store.retract(record.id, reason=f"{CHECK_REASON}: {detail}", actor=_ACTOR)
        return "retracted"
    except (StateWiseError, ValueError) as error:
        return f"not recorded: {error}"


def check_memory(
    workspace: str | Path,
    contract: Contract,
    *,
    store: Store | None = None,
    home: str | Path | None = None,
    files: Sequence[MemoryFile] | None = None,
    environ: Mapping[str, str] | None = None,
    user: str | None = None,
    agents: Iterable[str] | None = None,
) -> CheckReport:
    """Verify every typed fact of the workspace's memory files (see the module docstring).

    With ``store``, verdicts are recorded on the lines' imported records (run
    :func:`statewise.memory.import_memory` first so that they exist).
    """
    workspace = Path(workspace).resolve()
    task = derive_task_scope(workspace, user=user)
    if files is None:
        files = discover_memory_files(workspace, home=home, environ=environ, task=task, agents=agents)
    # a memory file inside vendored code (vendor/, third_party/, node_modules/) describes its
    # upstream project, not this one: its lines are imported but not held to this tree
    files = [f for f in files if not _VENDORED.intersection(Path(f.relpath).parts[:-1])]
    # a line that names a tool the project uses (tools.yaml), or a dependency or feature its
    # manifests declare (manifests.yaml), states that as a fact too
    lines = [replace(line, facts=line.facts + extra)
             if (extra := tool_facts(line) + declared_facts(line) + _range_facts(line) + count_facts(line)
                 + link_facts(line) + length_facts(line)) else line
             for line in read_lines(files, contract, task)]
    top = git_output(workspace, "rev-parse", "--show-toplevel")
    root = Path(top).resolve() if top else workspace
    verifier = _Verifier(contract, environ, user, root)
    # when each memory file was added bounds the history searched for evidence: one walk for all
    verifier.tree.note_memory_files([_since_file_of(verifier, f.path) for f in files])
    findings: list[Finding] = []
    for line in lines:
        for fact in line.facts:
            finding = _check_fact(verifier, line, fact)
            if store is not None:
                finding = replace(finding, recorded=_record(store, finding, line.digest))
            findings.append(finding)
    return CheckReport(workspace=workspace, files=tuple(files), lines=tuple(lines), findings=tuple(findings),
                       root=root)


# --- output --------------------------------------------------------------------------------


def render_human(report: CheckReport, *, verbose: bool = False) -> str:
    """Per file and line: the verdict, the quoted line, the evidence and the correct value."""
    out: list[str] = []
    for finding in report.findings:
        # stale? is a lower severity with no evidence: listed with -v, counted in the summary
        if finding.status in (VALID, GENERATED, STALE) and not verbose:
            continue
        value = render_value(finding.claimed)
        out.append(f"{finding.file.relpath}:{finding.line}: {finding.status}: {finding.key} = {value}")
        out.append(f"    > {finding.text.strip()}")
        if finding.status == DEFECTIVE:
            out.extend(f"    evidence: {item}" for item in finding.evidence)
            if finding.correct is not None:
                out.append(f"    correct: {render_value(finding.correct)}")
        elif finding.status in (UNRESOLVED, STALE):
            out.append(f"    missing: {finding.missing}")
        if finding.recorded:
            out.append(f"    store: {finding.recorded}")
    summary = report.summary
    out.append(f"{summary['files']} memory files, {summary['facts']} facts: {summary[VALID]} valid, "
               f"{summary[DEFECTIVE]} defective, {summary[STALE]} stale?, {summary[GENERATED]} generated, "
               f"{summary[UNRESOLVED]} unresolved; "
               f"{summary['untyped']} untyped lines kept as text")
    return "\n".join(out)


def to_json(report: CheckReport) -> dict[str, Any]:
    """The report as plain JSON data."""
    return {
        "workspace": str(report.workspace),
        "files": [{"file": f.relpath, "path": str(f.path), "agent": f.agent, "kind": f.kind,
                   "authority": f.authority.value, "scope": f.scope, "blob": f.blob} for f in report.files],
        "findings": [finding.to_dict() for finding in report.findings],
        "summary": report.summary,
    }


_SARIF_RULES = {
    DEFECTIVE: ("memory-defective", "error", "A memory-file line the live workspace contradicts."),
    STALE: ("memory-stale", "warning", "A memory-file line nothing holds, with no evidence of what replaced it."),
    UNRESOLVED: ("memory-unresolved", "note", "A memory-file line nothing could verify."),
}


def to_sarif(report: CheckReport, *, version: str = "0") -> dict[str, Any]:
    """The defective and unresolved findings as a SARIF 2.1.0 log (for code-scanning UIs)."""
    results = []
    for finding in report.findings:
        if finding.status not in _SARIF_RULES:
            continue
        rule_id, level, _ = _SARIF_RULES[finding.status]
        text = f"{finding.key} = {render_value(finding.claimed)} is {finding.status}"
        if finding.status == DEFECTIVE:
            text += ": " + "; ".join(finding.evidence)
            if finding.correct is not None:
                text += f". Correct value: {render_value(finding.correct)}"
        else:
            text += f": {finding.missing}"
        uri = finding.file.relpath if not finding.file.relpath.startswith(("/", "~")) else (
            Path(finding.file.path).as_uri())
        results.append({
            "ruleId": rule_id,
            "level": level,
            "message": {"text": text},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": uri, **({"uriBaseId": "SRCROOT"} if not uri.startswith("file:") else {})},
                "region": {"startLine": finding.line, "snippet": {"text": finding.text}},
            }}],
            "properties": {"key": finding.key, "claimed": finding.claimed, "correct": finding.correct,
                           "scope": finding.scope, "agent": finding.file.agent},
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "statewise-memory-check",
                "version": version,
                "rules": [{"id": rule_id, "shortDescription": {"text": text}, "defaultConfiguration": {"level": level}}
                          for rule_id, level, text in _SARIF_RULES.values()],
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": (report.root or report.workspace).as_uri() + "/"}},
            "results": results,
        }],
    }
