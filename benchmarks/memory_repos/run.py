"""`statewise memory check` on real repositories' memory files, against hand labels (issue 24).

Run by hand, not in CI::

    python benchmarks/memory_repos/run.py --clones DIR [--source TEMPLATE] [--only OWNER/NAME]
        [--set NAME] [--json FILE] [--unlabelled FILE]

For each repository of ``manifest.yaml`` (pinned by ``owner/name`` and commit), a local clone
at the pinned commit lives under ``--clones`` (made with ``git clone`` from ``--source``, a
template with ``{repo}``, ``{owner}`` and ``{name}``; default the public GitHub address), outside
this repository. In it ``statewise memory check --json --diff`` runs the way a new user would:
the built-in contract, the repository's own files, ``HOME`` an empty folder (no user memory
file) and no StateWise variable from this environment. ``--diff`` only adds the proposed
corrections to the output; nothing is written into the clone's files.

Every finding is compared with ``labels.yaml``: one hand label per (repository, file, line,
sha256 of the line's text) with a verdict, ``defective`` (the line is wrong in that tree),
``correct`` or ``not-a-fact`` (no claim a check could hold the tree to), and a one-line
reason. The labels never hold the files' text: a label whose sha256 no longer matches the
line is not applied. A symlinked memory file (CLAUDE.md -> AGENTS.md) is one real file: lines
are counted once, by the real file's path.

Drift pairs (``drift:`` in the manifest) check a memory file from an old commit against the
pinned tree: the old text is written over the file in the clone, checked, and the file is
restored. A pair of a repository that is not among ``repositories`` names its own pinned tree
(``commit``); its current files are then not part of the precision on current files. Their
labels (``drift_labels`` in labels.yaml) name the old file's lines that changed between the
two commits; ``defective`` there means stale in the pinned tree.

Reported per repository and overall: the distinct lines flagged ``defective`` and how many
the labels call defective (precision), flags per repository, the exit status, the
repositories where ``check`` fails with no real error (no line labelled defective), the
write-back proposals that would change a line labelled correct or not-a-fact, time per
repository (p50), and on drift pairs the recall of stale lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = "https://github.com/{repo}.git"
DEFECTIVE = "defective"
VERDICTS = (DEFECTIVE, "correct", "not-a-fact")
CHECK_TIMEOUT = 600.0


def line_digest(text: str) -> str:
    """The sha256 a label names a line by (the line's text without trailing whitespace)."""
    return hashlib.sha256(text.rstrip().encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class LineId:
    """One line of one real memory file of one repository."""

    repo: str
    file: str
    line: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Label:
    """A hand verdict on one line."""

    verdict: str
    reason: str


@dataclass
class RunResult:
    """What one ``memory check`` run produced, reduced to distinct real lines."""

    name: str  # the repository, or "repository: file@old" for a drift pair
    repo: str
    exit_status: int
    seconds: float
    error: str = ""
    flagged: dict[LineId, str] = field(default_factory=dict)  # defective line -> its text
    checked: dict[LineId, str] = field(default_factory=dict)  # valid or unresolved line -> its text
    edits: list[LineId] = field(default_factory=list)  # lines a write-back proposal would change
    files: int = 0
    facts: int = 0
    cpu_seconds: float = 0.0  # user + system time of the check and what it ran (wall time varies with load)
    statuses: dict[LineId, list[str]] = field(default_factory=dict)  # every verdict on each line
    drift_set: str = ""  # drift pairs: the manifest's set (old: the five first pairs; new: added later)


def load_labels(path: Path, section: str) -> dict[LineId, Label]:
    """The labels of one section of labels.yaml, by line."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    labels: dict[LineId, Label] = {}
    for item in data.get(section) or []:
        verdict = str(item["verdict"])
        if verdict not in VERDICTS:
            raise ValueError(f"{path}: {item}: verdict must be one of {', '.join(VERDICTS)}")
        key = LineId(str(item["repo"]), str(item["file"]), int(item["line"]), str(item["sha256"]))
        labels[key] = Label(verdict, str(item.get("reason", "")))
    return labels


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def ensure_clone(repo: str, commit: str, clones: Path, source: str) -> Path:
    """A clone of ``repo`` at ``commit`` under ``clones``, its files exactly as committed."""
    owner, name = repo.split("/", 1)
    dest = clones / f"{owner}+{name}"
    if not (dest / ".git").exists():
        clones.mkdir(parents=True, exist_ok=True)
        _git("clone", "--quiet", "--no-checkout", source.format(repo=repo, owner=owner, name=name), str(dest))
    try:
        _git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", commit, cwd=dest)
    except RuntimeError:
        # A partial source (a snapshot without its largest blobs) cannot check out whole: leave
        # the missing files out of the work tree (sparse checkout) rather than the repository.
        _sparse_without_missing(dest, commit)
        _git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", commit, cwd=dest)
    _git("clean", "-fdxq", cwd=dest)
    return dest


def _sparse_without_missing(dest: Path, commit: str) -> None:
    listing = _git("ls-tree", "-r", "-z", "--format=%(objecttype) %(objectname) %(path)", commit, cwd=dest)
    entries = [item.split(" ", 2) for item in listing.split("\0") if item.startswith("blob ")]
    probe = subprocess.run(["git", "cat-file", "--batch-check=%(objectname)"], cwd=dest, capture_output=True,
                           text=True, input="".join(f"{oid}\n" for _, oid, _ in entries), timeout=600, check=False)
    missing = {line.split()[0] for line in probe.stdout.splitlines() if line.endswith(" missing")}
    patterns = ["/*"] + ["!/" + path for _, oid, path in entries if oid in missing]
    _git("sparse-checkout", "init", "--no-cone", cwd=dest)
    (dest / ".git" / "info" / "sparse-checkout").write_text("\n".join(patterns) + "\n", encoding="utf-8")


def _relative(path: str, root: Path) -> str:
    real = Path(path).resolve()
    try:
        return real.relative_to(root.resolve()).as_posix()
    except ValueError:
        return real.as_posix()


#: ``--home``: one HOME for every run (a user's caches persist between repositories); None:
#: a fresh empty HOME per run (every run is a first run: the contract cache is always cold).
SHARED_HOME: Path | None = None


def run_check(name: str, repo: str, clone: Path, statewise: Sequence[str]) -> RunResult:
    """``statewise memory check --json --diff`` in ``clone`` as a new user runs it."""
    _git("clean", "-fdxq", "--", ".statewise", cwd=clone)  # a previous run's store must not carry over
    with tempfile.TemporaryDirectory(prefix="memory-repos-home-") as fresh:
        home = str(SHARED_HOME) if SHARED_HOME is not None else fresh
        environ = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
        environ.update(HOME=home, XDG_CONFIG_HOME=str(Path(home) / ".config"),
                       XDG_DATA_HOME=str(Path(home) / ".local" / "share"), GIT_CONFIG_NOSYSTEM="1")
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            done = subprocess.run([*statewise, "memory", "check", "--json", "--diff"], cwd=clone, env=environ,
                                  capture_output=True, text=True, timeout=CHECK_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return RunResult(name, repo, -1, time.perf_counter() - started, error="timed out")
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result = RunResult(name, repo, done.returncode, seconds, cpu_seconds=cpu)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        result.error = (done.stderr.strip().splitlines() or ["no JSON output"])[-1][:300]
        return result
    real_files = {_relative(f["path"], clone) for f in data.get("files", [])}
    result.files = len(real_files)
    result.facts = len(data.get("findings", []))
    for finding in data.get("findings", []):
        line = LineId(repo, _relative(finding["path"], clone), int(finding["line"]), line_digest(finding["text"]))
        result.statuses.setdefault(line, []).append(str(finding["status"]))
        if finding["status"] == DEFECTIVE:
            result.flagged[line] = finding["text"]
            result.checked.pop(line, None)
        elif line not in result.flagged:
            result.checked[line] = finding["text"]
    by_relpath = {f["file"]: _relative(f["path"], clone) for f in data.get("files", [])}
    seen: set[LineId] = set()
    for edit in data.get("edits", []):
        real = by_relpath.get(edit["file"], edit["file"])
        line = LineId(repo, real, int(edit["line"]), line_digest(edit["old"]))
        if line not in seen:
            seen.add(line)
            result.edits.append(line)
    return result


def run_floor(name: str, clone: Path) -> RunResult:
    """``python -c pass`` in the clone: the start-up floor, timed like a check beside it."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "pass"], cwd=clone, capture_output=True, timeout=CHECK_TIMEOUT, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return RunResult(name, name, 0, time.perf_counter() - started, cpu_seconds=cpu)


def run_drift(pair: Mapping[str, Any], clone: Path, statewise: Sequence[str]) -> RunResult:
    """The memory file of ``pair['old']`` checked against the pinned tree, then restored."""
    target = clone / str(pair["file"])
    old_text = _git("show", f"{pair['old']}:{pair.get('old_file', pair['file'])}", cwd=clone)
    saved = target.read_bytes() if target.exists() else None
    real = target.resolve() if target.exists() else target
    try:
        real.write_text(old_text, encoding="utf-8")
        result = run_check(f"{pair['repo']}: {pair['file']}@{str(pair['old'])[:10]}", str(pair["repo"]), clone,
                           statewise)
        result.drift_set = str(pair.get("set", "old"))
        return result
    finally:
        if saved is None:
            real.unlink()
        else:
            real.write_bytes(saved)


@dataclass
class Tally:
    """Flags compared with labels."""

    true_flags: int = 0  # flagged, labelled defective
    false_flags: int = 0  # flagged, labelled correct or not-a-fact
    unlabelled: int = 0  # flagged, no label (or the line's text changed)
    missed: int = 0  # labelled defective, not flagged
    harmful_edits: int = 0  # write-back would change a line labelled correct or not-a-fact

    @property
    def precision(self) -> float | None:
        judged = self.true_flags + self.false_flags
        return self.true_flags / judged if judged else None

    @property
    def recall(self) -> float | None:
        stale = self.true_flags + self.missed
        return self.true_flags / stale if stale else None

    def add(self, other: Tally) -> None:
        self.true_flags += other.true_flags
        self.false_flags += other.false_flags
        self.unlabelled += other.unlabelled
        self.missed += other.missed
        self.harmful_edits += other.harmful_edits


def tally(result: RunResult, labels: Mapping[LineId, Label]) -> Tally:
    """Flags of one run against the labels of its repository."""
    counts = Tally()
    for line in result.flagged:
        label = labels.get(line)
        if label is None:
            counts.unlabelled += 1
        elif label.verdict == DEFECTIVE:
            counts.true_flags += 1
        else:
            counts.false_flags += 1
    counts.missed = sum(1 for line, label in labels.items()
                        if line.repo == result.repo and label.verdict == DEFECTIVE and line not in result.flagged)
    counts.harmful_edits = sum(1 for line in result.edits
                               if (label := labels.get(line)) is not None and label.verdict != DEFECTIVE)
    return counts


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def report(results: Sequence[RunResult], drifts: Sequence[RunResult], labels: Mapping[LineId, Label],
           drift_labels: Mapping[LineId, Label]) -> dict[str, Any]:
    """Per repository and overall, as printed and as JSON."""
    rows: list[dict[str, Any]] = []
    overall = Tally()
    failing_without_error: list[str] = []
    clean_repositories = 0
    for result in results:
        counts = tally(result, labels)
        overall.add(counts)
        real_error = any(line.repo == result.repo and label.verdict == DEFECTIVE for line, label in labels.items())
        if not real_error:
            clean_repositories += 1
            if result.exit_status != 0:
                failing_without_error.append(result.repo)
        rows.append({"repo": result.repo, "files": result.files, "facts": result.facts,
                     "flagged": len(result.flagged), "true": counts.true_flags, "false": counts.false_flags,
                     "unlabelled": counts.unlabelled, "missed": counts.missed, "harmful_edits": counts.harmful_edits,
                     "real_error": real_error, "exit": result.exit_status, "seconds": round(result.seconds, 2),
                     "cpu_seconds": round(result.cpu_seconds, 2),
                     "error": result.error})
    drift_rows: list[dict[str, Any]] = []
    drift_total = Tally()
    by_set: dict[str, Tally] = {}
    for result in drifts:
        pair_labels = {line: label for line, label in drift_labels.items() if line.repo == result.repo}
        counts = tally(result, pair_labels)
        drift_total.add(counts)
        by_set.setdefault(result.drift_set or "old", Tally()).add(counts)
        # the stale lines not flagged, with what the check said of them (no text): for listing
        # the misses by class
        missed = [{"file": line.file, "line": line.line, "statuses": result.statuses.get(line, ["no fact"])}
                  for line, label in sorted(pair_labels.items(), key=lambda item: (item[0].file, item[0].line))
                  if label.verdict == DEFECTIVE and line not in result.flagged]
        drift_rows.append({"pair": result.name, "set": result.drift_set or "old", "flagged": len(result.flagged),
                           "true": counts.true_flags, "false": counts.false_flags, "unlabelled": counts.unlabelled,
                           "missed": counts.missed, "missed_lines": missed, "harmful_edits": counts.harmful_edits,
                           "exit": result.exit_status, "error": result.error})
    times = [result.seconds for result in results]
    summary = {
        "repositories": len(results),
        "flagged_lines": sum(len(r.flagged) for r in results),
        "flags_per_repository": round(statistics.mean(len(r.flagged) for r in results), 2) if results else 0,
        "precision_defective": overall.precision,
        "true_flags": overall.true_flags, "false_flags": overall.false_flags, "unlabelled_flags": overall.unlabelled,
        "missed": overall.missed,
        "harmful_edits": overall.harmful_edits + drift_total.harmful_edits,
        "repositories_without_real_error": clean_repositories,
        "exit_0_without_real_error": clean_repositories - len(failing_without_error),
        "failing_without_real_error": failing_without_error,
        "errors": [r.repo for r in results if r.error],
        "p50_seconds": round(statistics.median(times), 2) if times else None,
        "p50_cpu_seconds": round(statistics.median(r.cpu_seconds for r in results), 2) if results else None,
        "drift_pairs": len(drifts), "drift_recall": drift_total.recall, "drift_precision": drift_total.precision,
        "drift_true": drift_total.true_flags, "drift_missed": drift_total.missed,
        "drift_false": drift_total.false_flags, "drift_unlabelled": drift_total.unlabelled,
        "drift_sets": {name: {"recall": t.recall, "precision": t.precision, "true": t.true_flags,
                              "missed": t.missed, "false": t.false_flags, "unlabelled": t.unlabelled}
                       for name, t in sorted(by_set.items())},
    }
    return {"repositories": rows, "drift": drift_rows, "summary": summary}


def print_report(data: Mapping[str, Any]) -> None:
    print(f"{'repository':40} {'files':>5} {'facts':>5} {'flag':>4} {'true':>4} {'false':>5} {'unlab':>5} "
          f"{'miss':>4} {'exit':>4} {'sec':>6}")
    for row in data["repositories"]:
        print(f"{row['repo']:40} {row['files']:>5} {row['facts']:>5} {row['flagged']:>4} {row['true']:>4} "
              f"{row['false']:>5} {row['unlabelled']:>5} {row['missed']:>4} {row['exit']:>4} {row['seconds']:>6.2f}"
              + (f"  ERROR {row['error']}" if row["error"] else ""))
    for row in data["drift"]:
        print(f"drift ({row['set']}) {row['pair']}: flagged {row['flagged']}, stale caught {row['true']}, "
              f"missed {row['missed']}, false {row['false']}, unlabelled {row['unlabelled']}")
        for miss in row["missed_lines"]:
            print(f"    missed {miss['file']}:{miss['line']}: {', '.join(miss['statuses'])}")
    summary = data["summary"]
    print(f"precision of defective: {_pct(summary['precision_defective'])} ({summary['true_flags']} true, "
          f"{summary['false_flags']} false, {summary['unlabelled_flags']} unlabelled); "
          f"{summary['flagged_lines']} flagged lines, {summary['flags_per_repository']} per repository")
    print(f"exit 0 on {summary['exit_0_without_real_error']} of {summary['repositories_without_real_error']} "
          f"repositories without a real error; failing: {', '.join(summary['failing_without_real_error']) or 'none'}")
    print(f"write-back proposals changing a line labelled correct or not-a-fact: {summary['harmful_edits']}")
    print(f"drift pairs: {summary['drift_pairs']}, recall of stale lines {_pct(summary['drift_recall'])} "
          f"({summary['drift_true']} caught, {summary['drift_missed']} missed), precision "
          f"{_pct(summary['drift_precision'])} ({summary['drift_false']} false, {summary['drift_unlabelled']} "
          "unlabelled)")
    for name, t in summary["drift_sets"].items():
        print(f"drift pairs, set {name}: recall {_pct(t['recall'])} ({t['true']} caught, {t['missed']} missed), "
              f"precision {_pct(t['precision'])} ({t['false']} false, {t['unlabelled']} unlabelled)")
    print(f"p50 seconds per repository: {summary['p50_seconds']} wall, {summary['p50_cpu_seconds']} CPU")


def _unlabelled(results: Iterable[RunResult], labels: Mapping[LineId, Label]) -> list[dict[str, Any]]:
    """Flagged lines with no label, with their text: for labelling by hand (never committed)."""
    out = []
    for result in results:
        for line, text in result.flagged.items():
            if line not in labels:
                out.append({"run": result.name, "repo": line.repo, "file": line.file, "line": line.line,
                            "sha256": line.sha256, "text": text})
    return out


def _raw(result: RunResult) -> dict[str, Any]:
    return {"name": result.name, "repo": result.repo, "exit": result.exit_status, "seconds": result.seconds,
            "cpu_seconds": result.cpu_seconds,
            "error": result.error, "files": result.files, "facts": result.facts,
            "flagged": [[line.file, line.line, line.sha256, text] for line, text in result.flagged.items()],
            "checked": [[line.file, line.line, line.sha256, text] for line, text in result.checked.items()],
            "edits": [[line.file, line.line, line.sha256] for line in result.edits],
            "statuses": [[line.file, line.line, line.sha256, statuses] for line, statuses in result.statuses.items()],
            "drift_set": result.drift_set}


def _read_raw(path: Path) -> tuple[list[RunResult], list[RunResult]]:
    data = json.loads(path.read_text(encoding="utf-8"))

    def one(item: dict[str, Any]) -> RunResult:
        repo = item["repo"]
        return RunResult(item["name"], repo, item["exit"], item["seconds"], item["error"],
                         {LineId(repo, f, n, h): t for f, n, h, t in item["flagged"]},
                         {LineId(repo, f, n, h): t for f, n, h, t in item["checked"]},
                         [LineId(repo, f, n, h) for f, n, h in item["edits"]], item["files"], item["facts"],
                         item.get("cpu_seconds", 0.0),
                         {LineId(repo, f, n, h): list(s) for f, n, h, s in item.get("statuses", [])},
                         item.get("drift_set", ""))

    return [one(i) for i in data["results"]], [one(i) for i in data["drifts"]]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clones", type=Path, required=True, help="Where the clones live (outside this repo).")
    parser.add_argument("--source", default=DEFAULT_SOURCE, help="Clone source template ({repo}, {owner}, {name}).")
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.yaml")
    parser.add_argument("--labels", type=Path, default=HERE / "labels.yaml")
    parser.add_argument("--only", action="append", default=[], help="Only this owner/name (repeatable).")
    parser.add_argument("--set", action="append", default=[], dest="sets",
                        help="Only the drift pairs of this set of the manifest (repeatable; a pair without "
                             "`set` is in `old`); the repositories' current files are then not checked.")
    parser.add_argument("--json", type=Path, help="Also write the report as JSON here.")
    parser.add_argument("--unlabelled", type=Path, help="Write flagged lines without a label here (with text).")
    parser.add_argument("--raw", type=Path, help="Also write what each run flagged (with text; not for committing).")
    parser.add_argument("--from-raw", type=Path, help="Score a --raw file again (after labelling) without running.")
    parser.add_argument("--statewise", default=str(Path(sys.executable).with_name("statewise")),
                        help="The statewise executable.")
    parser.add_argument("--baseline", help="Another statewise executable (e.g. the main branch's), run on every "
                                           "clone right beside --statewise (alternating which goes first), with "
                                           "`python -c pass` as the floor: timings of one run under one load.")
    parser.add_argument("--home", type=Path, help="One HOME for every run, created empty if absent (as a user "
                                                     "whose caches persist); default: a fresh empty HOME per run.")
    args = parser.parse_args(argv)
    global SHARED_HOME
    SHARED_HOME = args.home
    if args.home is not None:
        args.home.mkdir(parents=True, exist_ok=True)
    manifest = yaml.safe_load(args.manifest.read_text(encoding="utf-8"))
    labels = load_labels(args.labels, "labels")
    drift_labels = load_labels(args.labels, "drift_labels")
    statewise = [args.statewise]
    results: list[RunResult] = []
    drifts: list[RunResult] = []
    base_results: list[RunResult] = []
    base_drifts: list[RunResult] = []
    floors: list[RunResult] = []
    pins = {str(item["repo"]): str(item["commit"]) for item in manifest["repositories"]}
    if args.from_raw:
        results, drifts = _read_raw(args.from_raw)
        pins = {}
        manifest["drift"] = []
    for repo, commit in pins.items():
        if (args.only and repo not in args.only) or args.sets:
            continue
        clone = ensure_clone(repo, commit, args.clones, args.source)
        if args.baseline:
            floors.append(run_floor(repo, clone))
            first_base = len(base_results) % 2 == 0
            if first_base:
                base_results.append(run_check(repo, repo, clone, [args.baseline]))
            results.append(run_check(repo, repo, clone, statewise))
            if not first_base:
                base_results.append(run_check(repo, repo, clone, [args.baseline]))
        else:
            results.append(run_check(repo, repo, clone, statewise))
    for pair in manifest.get("drift") or []:
        if args.only and pair["repo"] not in args.only:
            continue
        if args.sets and str(pair.get("set", "old")) not in args.sets:
            continue
        # a pair of a repository outside ``repositories`` pins its own tree (``commit``)
        commit = pins.get(str(pair["repo"])) or str(pair["commit"])
        clone = ensure_clone(str(pair["repo"]), commit, args.clones, args.source)
        drifts.append(run_drift(pair, clone, statewise))
        if args.baseline:
            base_drifts.append(run_drift(pair, clone, [args.baseline]))
    data = report(results, drifts, labels, drift_labels)
    if args.baseline:
        print(f"--- baseline: {args.baseline}")
        base = report(base_results, base_drifts, labels, drift_labels)
        print_report(base)
        data["baseline"] = base
        data["floor_p50_seconds"] = round(statistics.median(r.seconds for r in floors), 3) if floors else None
        data["load_average"] = os.getloadavg()
        print(f"--- this run: {args.statewise}")
    print_report(data)
    if args.baseline:
        changed = [r.name for r, b in zip(results, base_results, strict=True)
                   if set(r.flagged) != set(b.flagged) or r.statuses != b.statuses or r.exit_status != b.exit_status]
        base_summary = data["baseline"]["summary"]
        print(f"side by side (one run, alternating): p50 wall {base_summary['p50_seconds']} s -> "
              f"{data['summary']['p50_seconds']} s, p50 CPU {base_summary['p50_cpu_seconds']} s -> "
              f"{data['summary']['p50_cpu_seconds']} s; floor (python -c pass) p50 {data['floor_p50_seconds']} s; "
              f"load average at the end {' '.join(f'{x:.2f}' for x in data['load_average'])}")
        print(f"repositories whose verdicts differ from the baseline: {', '.join(changed) or 'none'}")
        data["verdicts_differ"] = changed
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.raw:
        args.raw.write_text(json.dumps({"results": [_raw(r) for r in results], "drifts": [_raw(r) for r in drifts]},
                                       indent=1) + "\n", encoding="utf-8")
    if args.unlabelled:
        todo = _unlabelled(results, labels) + _unlabelled(drifts, drift_labels)
        args.unlabelled.write_text(yaml.safe_dump(todo, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
