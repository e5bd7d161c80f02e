"""`statewise memory check` beside the static agent-file linters, on labelled repositories (issue 12).

One command::

    python benchmarks/memory_lint.py [--json FILE] [--no-install]

installs the linters at the versions in :data:`PINS` with npm into a cache folder (never
globally; ``$STATEWISE_LINT_CACHE``, else ``~/.cache/statewise-memory-lint/<hash of the pins>``),
copies each repository to a temporary folder outside any git checkout, runs every tool and
``statewise memory check --json --no-store`` on the same copy, and prints, per tool, what it
flags and what it misses against hand-made labels:

* the repositories are the fixtures in ``tests/fixtures/memory_repos/<name>/`` (memory files
  stored as ``*.fixture``, labels in ``labels.yaml``: the wrong lines, named by a unique
  substring) and this repository's own ``AGENTS.md`` with the tracked files it refers to
  (no line labelled wrong);
* a tool *flags* a line when it reports a finding located at that line (file and line) of a
  memory file; StateWise flags its ``defective`` and ``stale?`` findings (``stale?`` is a line
  nothing holds with no history to show what replaced it, as in these copies outside git;
  ``unresolved`` ones are counted
  apart, never as a flag);
* caught = labelled lines flagged, missed = labelled lines not flagged, other flagged lines =
  findings located at lines not labelled wrong (a structure linter's style advice lands here:
  it is not a claim that the line is wrong, but it is not a wrong fact either), unlocated =
  findings about a file or the workspace as a whole.

``agents-lint``, which the issue names, is absent: ``npm view agents-lint`` answers E404 on
the registry this project reaches (checked 2026-12-01, with several scoped and variant names),
so it cannot be installed; :data:`ABSENT` says so in the output.

Each tool runs with an argv list, a timeout and ``HOME`` set to an empty folder (so no user
file is read, and agentlinter runs with ``--local``: it uploads its report otherwise). A tool
that fails, times out or prints what cannot be parsed is reported as an error for that
repository, never as "no findings".
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "memory_repos"
SELF_REPOSITORY = "statewise (this repository)"

#: The linters, at the versions this benchmark is pinned to (npm package -> version).
PINS = {"agentlinter": "0.3.3", "claude-code-lint": "0.5.0", "agentlint": "0.3.0"}
#: Linters named by the issue that could not be installed, and why.
ABSENT = {"agents-lint": "not on the npm registry: `npm view agents-lint` answers E404 (checked 2026-12-01, "
                         "also for scoped and variant names)"}
TIMEOUT = 120.0
SUFFIX = ".fixture"


# --- labels and repositories ------------------------------------------------------------------


class LabelError(ValueError):
    """A labels file that does not name exactly one line per label."""


@dataclass(frozen=True)
class Label:
    """One wrong line: where it is and what is wrong with it."""

    file: str  # relative to the repository
    line: int
    kind: str
    text: str
    truth: str = ""


@dataclass(frozen=True)
class Repository:
    """One repository of the comparison: where its files come from and its labels."""

    name: str
    source: Path
    labels: tuple[Label, ...]
    origin: str = ""
    #: Only these files are copied (None: the whole folder); for this repository itself.
    files: tuple[str, ...] | None = None


def load_labels(folder: Path) -> tuple[tuple[Label, ...], str]:
    """The labels of a fixture folder (``labels.yaml``), each resolved to its one line; and the origin."""
    data = yaml.safe_load((folder / "labels.yaml").read_text(encoding="utf-8")) or {}
    labels = []
    for index, entry in enumerate(data.get("wrong") or []):
        name = entry["file"]
        stored = folder / f"{name}{SUFFIX}"
        path = stored if stored.is_file() else folder / name
        if not path.is_file():
            raise LabelError(f"{folder.name}: wrong[{index}]: no file {name}")
        lines = path.read_text(encoding="utf-8").splitlines()
        hits = [number for number, text in enumerate(lines, 1) if entry["contains"] in text]
        if len(hits) != 1:
            raise LabelError(f"{folder.name}: wrong[{index}]: {entry['contains']!r} is on {len(hits)} lines of "
                             f"{name}; a label must name exactly one")
        labels.append(Label(file=name, line=hits[0], kind=str(entry["kind"]), text=lines[hits[0] - 1].strip(),
                            truth=str(entry.get("truth", ""))))
    return tuple(labels), str(data.get("origin", ""))


def fixture_repositories(root: Path = FIXTURES) -> list[Repository]:
    """Every fixture under ``root`` that has a ``labels.yaml``, sorted by name."""
    repos = []
    for folder in sorted(p for p in root.iterdir() if (p / "labels.yaml").is_file()):
        labels, origin = load_labels(folder)
        repos.append(Repository(folder.name, folder, labels, origin))
    return repos


def self_repository() -> Repository | None:
    """This repository's AGENTS.md with every tracked file (what its lines refer to); no
    line labelled wrong. None outside a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    files = tuple(f for f in done.stdout.decode("utf-8", "replace").split("\0")
                  if f and not f.startswith("tests/fixtures/memory_repos/"))
    return Repository(SELF_REPOSITORY, ROOT, (), "this repository at its working tree", files)


def materialize(repo: Repository, dest: Path) -> Path:
    """Copy ``repo`` to ``dest`` (outside any git checkout): ``labels.yaml`` left out,
    ``*.fixture`` names restored."""
    if repo.files is None:
        shutil.copytree(repo.source, dest, ignore=shutil.ignore_patterns("labels.yaml"))
    else:
        for rel in repo.files:
            source = repo.source / rel
            if source.is_file():
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    for path in sorted(dest.rglob(f"*{SUFFIX}")):
        path.rename(path.with_name(path.name[: -len(SUFFIX)]))
    return dest


# --- the tools --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """One finding of one tool: where (line None: about a file or the workspace) and what."""

    file: str | None
    line: int | None
    rule: str
    message: str


@dataclass
class ToolRun:
    """One tool on one repository: its findings, or why there are none to count."""

    tool: str
    repository: str
    flags: list[Flag] = field(default_factory=list)
    error: str | None = None
    unresolved: int = 0  # StateWise only: facts nothing could decide
    seconds: float = 0.0


def _relative(path: str | None, workspace: Path) -> str | None:
    if not path or path.startswith("("):
        return None
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(workspace.resolve()).as_posix()
        except ValueError:
            return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")


def parse_statewise(data: dict[str, Any], workspace: Path) -> tuple[list[Flag], int]:
    """``statewise memory check --json``: the defective and stale? findings, and the count of unresolved ones."""
    flags = [Flag(_relative(f["file"], workspace), f["line"], f.get("key", ""),
                  str(f.get("evidence") or f.get("status", "")))
             for f in data.get("findings", []) if f.get("status") in ("defective", "stale?")]
    unresolved = sum(1 for f in data.get("findings", []) if f.get("status") == "unresolved")
    return flags, unresolved


def parse_agentlinter(data: dict[str, Any], workspace: Path) -> list[Flag]:
    """agentlinter ``--json``: ``diagnostics`` with ``file`` (or ``(workspace)``) and ``line``."""
    return [Flag(_relative(d.get("file"), workspace), d.get("line"), str(d.get("rule", "")), str(d.get("message", "")))
            for d in data.get("diagnostics", [])]


def parse_claudelint(data: dict[str, Any], workspace: Path) -> list[Flag]:
    """claude-code-lint ``check-all --format json``: each validator's errors and warnings."""
    flags = []
    for validator in data.get("validators", []):
        for item in [*validator.get("errors", []), *validator.get("warnings", [])]:
            flags.append(Flag(_relative(item.get("file"), workspace), item.get("line"), str(item.get("ruleId", "")),
                              str(item.get("message", ""))))
    return flags


def parse_agentlint(data: dict[str, Any], workspace: Path) -> list[Flag]:
    """agentlint ``scan --format json``: ``findings`` with ``location.path`` and ``start_line``."""
    flags = []
    for finding in data.get("findings", []):
        location = finding.get("location") or {}
        flags.append(Flag(_relative(location.get("path"), workspace), location.get("start_line"),
                          str(finding.get("rule_id", "")), str(finding.get("message", ""))))
    return flags


@dataclass(frozen=True)
class Tool:
    """How to run one tool and read its output."""

    name: str
    argv: Callable[[Path, Path], list[str]]  # (bin folder, workspace) -> argv
    parse: Callable[[dict[str, Any], Path], list[Flag]]
    #: Exit statuses that still mean "ran and reported" (linters exit non-zero on findings).
    ok_exit: tuple[int, ...] = (0, 1)


def tools() -> list[Tool]:
    """The npm linters, in report order (StateWise runs separately)."""
    return [
        Tool("agentlinter", lambda b, w: [str(b / "agentlinter"), "--local", "--json", str(w)], parse_agentlinter),
        Tool("claude-code-lint", lambda b, w: [str(b / "claudelint"), "check-all", "--format", "json"],
             parse_claudelint),
        Tool("agentlint", lambda b, w: [str(b / "agentlint"), "scan", str(w), "--format", "json", "--fail-on", "none"],
             parse_agentlint),
    ]


def _run(argv: list[str], cwd: Path, home: Path) -> tuple[int, str, str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LC_ALL": "C", "NO_COLOR": "1",
           "CI": "1", "TMPDIR": str(home)}
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def _json_of(stdout: str) -> dict[str, Any]:
    start = stdout.find("{")  # some tools print a line before the JSON
    data = json.loads(stdout[start:] if start >= 0 else stdout)
    if not isinstance(data, dict):
        raise ValueError("the output is not a JSON object")
    return data


def run_tool(tool: Tool, bin_dir: Path, workspace: Path, repository: str, home: Path) -> ToolRun:
    """One linter on one copy; a crash, a timeout or unreadable output is an error, not zero findings."""
    started = time.perf_counter()
    result = ToolRun(tool.name, repository)
    try:
        code, stdout, stderr = _run(tool.argv(bin_dir, workspace), workspace, home)
        if code not in tool.ok_exit:
            result.error = f"exit {code}: {(stderr or stdout).strip()[-300:]}"
        else:
            result.flags = tool.parse(_json_of(stdout), workspace)
    except subprocess.TimeoutExpired:
        result.error = f"no answer in {TIMEOUT:.0f} s"
    except (OSError, ValueError, KeyError, TypeError) as error:
        result.error = f"{type(error).__name__}: {error}"
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def run_statewise(workspace: Path, repository: str, home: Path) -> ToolRun:
    """``statewise memory check --json --no-store`` on one copy (exit 1 just means a defective line)."""
    started = time.perf_counter()
    result = ToolRun("statewise", repository)
    argv = [sys.executable, "-m", "statewise", "memory", "check", "--json", "--no-store", "--home", str(home),
            "--project", str(workspace)]
    try:
        code, stdout, stderr = _run(argv, workspace, home)
        if code not in (0, 1):
            result.error = f"exit {code}: {(stderr or stdout).strip()[-300:]}"
        else:
            result.flags, result.unresolved = parse_statewise(_json_of(stdout), workspace)
    except subprocess.TimeoutExpired:
        result.error = f"no answer in {TIMEOUT:.0f} s"
    except (OSError, ValueError, KeyError, TypeError) as error:
        result.error = f"{type(error).__name__}: {error}"
    result.seconds = round(time.perf_counter() - started, 2)
    return result


# --- installing ---------------------------------------------------------------------------------


class InstallProblem(RuntimeError):
    """The linters could not be installed (``missing_tool``: node or npm is not on PATH)."""

    def __init__(self, message: str, *, missing_tool: bool = False) -> None:
        super().__init__(message)
        self.missing_tool = missing_tool


def cache_dir() -> Path:
    """Where the pinned linters live."""
    configured = os.environ.get("STATEWISE_LINT_CACHE")
    if configured:
        return Path(configured).expanduser()
    digest = hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:16]
    return Path.home() / ".cache" / "statewise-memory-lint" / digest


def _installed_version(prefix: Path, package: str) -> str | None:
    try:
        version = json.loads((prefix / "node_modules" / package / "package.json").read_text(encoding="utf-8")).get(
            "version")
        return version if isinstance(version, str) else None
    except (OSError, ValueError):
        return None


def installed_versions(prefix: Path) -> dict[str, str | None]:
    return {package: _installed_version(prefix, package) for package in PINS}


def install_linters(prefix: Path | None = None) -> Path:
    """The ``node_modules/.bin`` folder holding the pinned linters, installing them if needed."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise InstallProblem(f"{' and '.join(missing)} not found on PATH; the linters are npm packages",
                             missing_tool=True)
    prefix = prefix or cache_dir()
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel runs must not interleave npm installs
        if installed_versions(prefix) != PINS:
            command = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
                       "--loglevel=error", *(f"{package}@{version}" for package, version in PINS.items())]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise InstallProblem(f"`{' '.join(command)}` did not finish in 900 s") from None
            if done.returncode != 0 or installed_versions(prefix) != PINS:
                raise InstallProblem(f"`{' '.join(command)}` failed (exit {done.returncode}): "
                                     f"{(done.stderr or done.stdout).strip()[-1000:]}")
    return prefix / "node_modules" / ".bin"


# --- scoring ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One tool on one repository, against the labels."""

    tool: str
    repository: str
    labelled: int
    caught: tuple[Label, ...]
    missed: tuple[Label, ...]
    other_lines: int  # located findings on lines not labelled wrong
    unlocated: int
    error: str | None = None
    unresolved: int = 0
    #: (file, line) -> the rules that fired there, for the caught and the other flagged lines.
    rules: tuple[tuple[str, int, str], ...] = ()


def score(run: ToolRun, labels: Sequence[Label]) -> Score:
    """Caught, missed and other flagged lines of ``run`` against ``labels`` (at line level:
    several findings on one line count once)."""
    located = {(f.file, f.line) for f in run.flags if f.file is not None and f.line is not None}
    wanted = {(label.file, label.line): label for label in labels}
    caught = tuple(label for key, label in wanted.items() if key in located)
    missed = tuple(label for key, label in wanted.items() if key not in located)
    if run.error is not None:  # nothing was seen: every label is missed, nothing else is counted
        return Score(run.tool, run.repository, len(labels), (), tuple(labels), 0, 0, run.error)
    fired: dict[tuple[str, int], list[str]] = {}
    for f in run.flags:
        if f.file is not None and f.line is not None:
            fired.setdefault((f.file, f.line), []).append(f.rule)
    rules = tuple((file, line, ", ".join(dict.fromkeys(names))) for (file, line), names in sorted(fired.items()))
    return Score(run.tool, run.repository, len(labels), caught, missed, len(located - set(wanted)),
                 sum(1 for f in run.flags if f.file is None or f.line is None), None, run.unresolved, rules)


def rules_at(s: Score, file: str, line: int) -> str:
    """The rules of ``s`` that fired at ``file``:``line`` ("" for none)."""
    return next((names for f, n, names in s.rules if (f, n) == (file, line)), "")


def totals(scores: Iterable[Score], order: Sequence[str]) -> list[dict[str, Any]]:
    """Per tool, over every repository it ran on without an error."""
    rows = []
    by_tool: dict[str, list[Score]] = {}
    for s in scores:
        by_tool.setdefault(s.tool, []).append(s)
    for tool in order:
        group = by_tool.get(tool, [])
        ran = [s for s in group if s.error is None]
        labelled = sum(s.labelled for s in ran)
        caught = sum(len(s.caught) for s in ran)
        other = sum(s.other_lines for s in ran)
        rows.append({
            "tool": tool, "repositories": len(ran), "errors": len(group) - len(ran), "labelled": labelled,
            "caught": caught, "missed": labelled - caught, "other_lines": other,
            "unlocated": sum(s.unlocated for s in ran), "unresolved": sum(s.unresolved for s in ran),
            "recall": caught / labelled if labelled else None,
            "precision": caught / (caught + other) if caught + other else None,
            "caught_kinds": sorted({label.kind for s in ran for label in s.caught}),
            "missed_kinds": sorted({label.kind for s in ran for label in s.missed}),
        })
    return rows


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def render(scores: Sequence[Score], repos: Sequence[Repository], order: Sequence[str],
           versions: dict[str, str]) -> str:
    """The two Markdown tables (per tool; per labelled line) and the notes."""
    out = ["| Tool | Repositories | Wrong lines (labelled) | Caught | Missed | Other lines flagged | "
           "Unlocated findings | Precision on lines | Errors |",
           "|---|---|---|---|---|---|---|---|---|"]
    for row in totals(scores, order):
        name = row["tool"] + (f" {versions[row['tool']]}" if row["tool"] in versions else "")
        extra = f" (+{row['unresolved']} unresolved)" if row["tool"] == "statewise" and row["unresolved"] else ""
        out.append(f"| {name} | {row['repositories']} | {row['labelled']} | {row['caught']} | {row['missed']}{extra} | "
                   f"{row['other_lines']} | {row['unlocated']} | {_pct(row['precision'])} | {row['errors']} |")
    for name, why in ABSENT.items():
        out.append(f"| {name} | - | - | - | - | - | - | - | absent: {why} |")
    out += ["", "| Repository | Wrong line | Kind | " + " | ".join(order) + " |",
            "|---|---|---|" + "---|" * len(order)]
    index = {(s.tool, s.repository): s for s in scores}
    for repo in repos:
        for label in repo.labels:
            marks = []
            for tool in order:
                s = index.get((tool, repo.name))
                marks.append("error" if s is None or s.error else
                             (f"flagged ({rules_at(s, label.file, label.line)})" if label in s.caught else "missed"))
            text = label.text.replace("|", "\\|")
            out.append(f"| {repo.name} | {label.file}:{label.line} ``{text[:60]}`` | {label.kind} | "
                       + " | ".join(marks) + " |")
    labelled = {(repo.name, label.file, label.line) for repo in repos for label in repo.labels}
    other = [f"{s.tool} on {s.repository} at {file}:{line} ({names})" for s in scores if s.error is None
             for file, line, names in s.rules if (s.repository, file, line) not in labelled]
    errors = [f"{s.tool} on {s.repository}: {s.error}" for s in scores if s.error]
    if other:
        out += ["", "Other lines flagged (not labelled wrong): " + "; ".join(other) + "."]
    if errors:
        out += ["", "Errors: " + "; ".join(errors) + "."]
    return "\n".join(out)


# --- the command --------------------------------------------------------------------------------


def compare(repos: Sequence[Repository], bin_dir: Path | None) -> tuple[list[ToolRun], list[Score]]:
    """Every tool on a fresh copy of every repository (linters only when ``bin_dir`` is given)."""
    runs: list[ToolRun] = []
    with tempfile.TemporaryDirectory(prefix="statewise-memory-lint-") as scratch:
        for number, repo in enumerate(repos):
            base = Path(scratch) / f"r{number}"
            home = base / "home"
            home.mkdir(parents=True)
            workspace = materialize(repo, base / "repo")
            runs.append(run_statewise(workspace, repo.name, home))
            if bin_dir is not None:
                for tool in tools():
                    # Each linter on its own fresh copy: a tool that writes a cache cannot affect the next.
                    copy = materialize(repo, base / f"copy-{tool.name}")
                    runs.append(run_tool(tool, bin_dir, copy, repo.name, home))
    labels = {repo.name: repo.labels for repo in repos}
    return runs, [score(run, labels[run.repository]) for run in runs]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", dest="json_path", help="also write every finding and score here")
    parser.add_argument("--no-install", action="store_true", help="StateWise only (no npm)")
    parser.add_argument("--no-self", action="store_true", help="leave this repository out")
    args = parser.parse_args(argv)
    repos = fixture_repositories()
    if not args.no_self:
        own = self_repository()
        if own is not None:
            repos.append(own)
    bin_dir = None
    versions: dict[str, str] = {}
    if not args.no_install:
        try:
            bin_dir = install_linters()
        except InstallProblem as problem:
            print(f"the linters are not available, so only StateWise runs: {problem}", file=sys.stderr)
        else:
            versions = {name: str(v) for name, v in installed_versions(bin_dir.parent.parent).items()}
    from statewise import __version__

    versions["statewise"] = __version__
    order = ["statewise", *(t.name for t in tools())] if bin_dir is not None else ["statewise"]
    started = time.perf_counter()
    runs, scores = compare(repos, bin_dir)
    print(render(scores, repos, order, versions))
    print(f"\n{len(repos)} repositories, {len(runs)} tool runs in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({
            "format": "statewise-memory-lint/1", "versions": versions, "absent": ABSENT,
            "repositories": [{"name": r.name, "origin": r.origin, "labels": [asdict(label) for label in r.labels]}
                             for r in repos],
            "runs": [asdict(run) for run in runs], "totals": totals(scores, order)}, indent=1), encoding="utf-8")
    return 0 if all(run.error is None for run in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
