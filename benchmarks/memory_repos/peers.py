"""The agent-file linters beside `statewise memory check` on the real repositories (issue 24).

Run by hand, not in CI::

    python benchmarks/memory_repos/peers.py --clones DIR --npm-bin DIR --agnix FILE
        [--source TEMPLATE] [--only OWNER/NAME] [--json FILE] [--unlabelled FILE]

The repositories are ``manifest.yaml``'s, cloned at their pinned commits under ``--clones``
(as ``run.py`` does). In each clone every peer runs the way its documentation says, with
``HOME`` an empty folder and no network use beyond what the tool does itself:

* agentlinter (npm) ``agentlinter --local --json .`` (``--local``: no report upload);
* claude-code-lint (npm, the ``claudelint`` binary) ``claudelint check-all --format json``;
* agnix (PyPI wheel, a native binary) ``agnix --format json .``.

``--npm-bin`` is the ``node_modules/.bin`` folder the npm packages were installed into
(``npm install --prefix DIR agentlinter@0.3.3 claude-code-lint@0.5.0``); ``--agnix`` the
``agnix`` executable of a virtual environment (``pip install agnix==0.59.3``). The npm
package of agnix downloads its binary from GitHub at install time, which this machine cannot
reach; the PyPI wheel carries it.

A finding is counted when it is located in a memory file (CLAUDE.md, AGENTS.md, GEMINI.md
and their local/override variants, ``.claude/rules``, ``.cursor/rules``): that is the
comparison's scope. Findings on other files (settings, skills, hooks) are counted apart and
not labelled. Each memory-file finding has a hand label in ``peer_labels.yaml`` (never the
files' text nor the tool's message): tool, repository, file, line, rule, the sha256 of the
line (empty for a finding about a whole file), and a verdict:

* ``true-fact``: it states something specific about this repository's files, commands or
  tree that is so (a path that does not exist, a script the manifest lacks);
* ``false-fact``: it states such a thing and it is not so;
* ``advice``: it states no fact of the repository (length, structure, wording, a missing
  section, a generic best practice), whether or not the advice is good.

StateWise's row is its ``defective`` findings, scored with ``labels.yaml`` (a line labelled
defective is a true fact, one labelled correct or not-a-fact a false one). A tool that fails,
times out or prints what cannot be parsed is reported as an error for that repository,
never as "no findings".
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TIMEOUT = 300.0
VERDICTS = ("true-fact", "false-fact", "advice")
MEMORY_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md"})


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


RUN = _module("memory_repos_run", HERE / "run.py")
LINT = _module("memory_lint", ROOT / "benchmarks" / "memory_lint.py")


def is_memory_file(relpath: str) -> bool:
    """Whether a repository-relative path is one of the memory files the agents load."""
    parts = relpath.split("/")
    if parts[-1] in MEMORY_NAMES:
        return True
    return len(parts) >= 3 and parts[-3:-1] in ([".claude", "rules"], [".cursor", "rules"])


@dataclass(frozen=True, slots=True)
class Finding:
    """One peer finding in a memory file: where, which rule, and the line's sha256."""

    tool: str
    repo: str
    file: str
    line: int  # 0: about the whole file
    rule: str
    sha256: str


@dataclass
class PeerRun:
    """One tool on one repository."""

    tool: str
    repo: str
    findings: list[Finding] = field(default_factory=list)
    messages: dict[Finding, str] = field(default_factory=dict)  # for labelling by hand, never committed
    other_files: int = 0  # findings on files that are not memory files
    unlocated: int = 0  # findings about the workspace as a whole
    error: str = ""
    seconds: float = 0.0


def parse_agnix(data: dict[str, Any], workspace: Path) -> list[Any]:
    """agnix ``--format json``: ``diagnostics`` with ``file`` ("" for the project) and ``line``."""
    flags = []
    for item in data.get("diagnostics", []):
        file = item.get("file") or None
        flags.append(LINT.Flag(LINT._relative(file, workspace) if file else None, item.get("line"),
                               str(item.get("rule", "")), str(item.get("message", ""))))
    return flags


@dataclass(frozen=True)
class Peer:
    """How to run one peer and read its output."""

    name: str
    argv: Callable[[Path], list[str]]
    parse: Callable[[dict[str, Any], Path], list[Any]]
    ok_exit: tuple[int, ...] = (0, 1)


def peers(npm_bin: Path, agnix: Path) -> list[Peer]:
    """The three peers, in report order."""
    return [
        Peer("agentlinter", lambda w: [str(npm_bin / "agentlinter"), "--local", "--json", str(w)],
             LINT.parse_agentlinter),
        Peer("claude-code-lint", lambda w: [str(npm_bin / "claudelint"), "check-all", "--format", "json"],
             LINT.parse_claudelint),
        Peer("agnix", lambda w: [str(agnix), "--format", "json", str(w)], parse_agnix),
    ]


def _line_sha(clone: Path, file: str, line: int) -> str:
    if line <= 0:
        return ""
    try:
        lines = (clone / file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return hashlib.sha256(lines[line - 1].rstrip().encode("utf-8")).hexdigest() if line <= len(lines) else ""


def run_peer(peer: Peer, repo: str, clone: Path) -> PeerRun:
    """One peer in one clone, with an empty HOME; an error is reported, never read as no findings."""
    result = PeerRun(peer.name, repo)
    flags: list[Any] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memory-peers-home-") as home:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "LC_ALL": "C", "NO_COLOR": "1",
               "CI": "1", "TMPDIR": home}
        try:
            done = subprocess.run(peer.argv(clone), cwd=clone, capture_output=True, text=True, timeout=TIMEOUT,
                                  env=env, stdin=subprocess.DEVNULL, check=False)
            if done.returncode not in peer.ok_exit:
                result.error = f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
            else:
                flags = peer.parse(LINT._json_of(done.stdout), clone)
        except subprocess.TimeoutExpired:
            result.error = f"no answer in {TIMEOUT:.0f} s"
        except (OSError, ValueError, KeyError, TypeError) as error:
            result.error = f"{type(error).__name__}: {error}"
    result.seconds = round(time.perf_counter() - started, 2)
    if result.error:
        return result
    seen: set[Finding] = set()
    for flag in flags:
        if flag.file is None or flag.file in ("", "."):
            result.unlocated += 1
            continue
        real = RUN._relative(str(clone / flag.file), clone)
        if not is_memory_file(real):
            result.other_files += 1
            continue
        line = int(flag.line or 0)
        finding = Finding(peer.name, repo, real, line, flag.rule, _line_sha(clone, real, line))
        if finding not in seen:
            seen.add(finding)
            result.findings.append(finding)
            result.messages[finding] = flag.message
    return result


def load_peer_labels(path: Path) -> tuple[dict[Finding, str], dict[tuple[str, str], str]]:
    """``peer_labels.yaml``: finding -> verdict, and (tool, rule) -> verdict for a rule whose
    every finding is advice (it checks length, structure or wording and cannot state a fact of
    the repository: judged once per rule, by reading its messages)."""
    if not path.exists():
        return {}, {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    by_rule: dict[tuple[str, str], str] = {}
    for item in data.get("rules") or []:
        if str(item["verdict"]) != "advice":
            raise ValueError(f"{path}: {item}: a whole rule can only be labelled advice; facts are labelled one by one")
        by_rule[(str(item["tool"]), str(item["rule"]))] = "advice"
    labels: dict[Finding, str] = {}
    for item in data.get("labels") or []:
        verdict = str(item["verdict"])
        if verdict not in VERDICTS:
            raise ValueError(f"{path}: {item}: verdict must be one of {', '.join(VERDICTS)}")
        key = Finding(str(item["tool"]), str(item["repo"]), str(item["file"]), int(item["line"]), str(item["rule"]),
                      str(item.get("sha256") or ""))
        labels[key] = verdict
    return labels, by_rule


def verdict_of(finding: Finding, labels: Mapping[Finding, str], by_rule: Mapping[tuple[str, str], str]) -> str | None:
    """A finding's own label, else its rule's; None when neither exists."""
    return labels.get(finding) or by_rule.get((finding.tool, finding.rule))


def score(runs: Sequence[PeerRun], labels: Mapping[Finding, str],
          by_rule: Mapping[tuple[str, str], str]) -> dict[str, dict[str, Any]]:
    """Per tool: findings in memory files by verdict, unlabelled ones, other files, errors."""
    table: dict[str, dict[str, Any]] = {}
    for run in runs:
        row = table.setdefault(run.tool, {"repositories": 0, "with_findings": 0, "findings": 0, "unlabelled": 0,
                                          "other_files": 0, "unlocated": 0, "errors": [],
                                          **{verdict: 0 for verdict in VERDICTS}})
        row["repositories"] += 1
        if run.error:
            row["errors"].append(f"{run.repo}: {run.error}")
            continue
        row["with_findings"] += bool(run.findings)
        row["findings"] += len(run.findings)
        row["other_files"] += run.other_files
        row["unlocated"] += run.unlocated
        for finding in run.findings:
            verdict = verdict_of(finding, labels, by_rule)
            if verdict is None:
                row["unlabelled"] += 1
            else:
                row[verdict] += 1
    return table


def statewise_row(raw: Path, labels_path: Path) -> dict[str, Any]:
    """StateWise's defective findings from a ``run.py --raw`` file, scored with labels.yaml."""
    results, _ = RUN._read_raw(raw)
    labels = RUN.load_labels(labels_path, "labels")
    row = {"repositories": len(results), "with_findings": sum(1 for r in results if r.flagged),
           "findings": sum(len(r.flagged) for r in results), "unlabelled": 0, "true-fact": 0, "false-fact": 0,
           "advice": 0, "other_files": 0, "unlocated": 0,
           "errors": [f"{r.repo}: {r.error}" for r in results if r.error]}
    for result in results:
        for line in result.flagged:
            label = labels.get(line)
            if label is None:
                row["unlabelled"] += 1
            else:
                row["true-fact" if label.verdict == RUN.DEFECTIVE else "false-fact"] += 1
    return row


def print_table(table: Mapping[str, Mapping[str, Any]]) -> None:
    print(f"{'tool':18} {'repos':>5} {'w/ find':>7} {'memory-file findings':>20} {'true fact':>9} {'false fact':>10} "
          f"{'advice':>6} {'unlab':>5} {'other files':>11} {'unlocated':>9} errors")
    for tool, row in table.items():
        print(f"{tool:18} {row['repositories']:>5} {row['with_findings']:>7} {row['findings']:>20} "
              f"{row['true-fact']:>9} {row['false-fact']:>10} {row['advice']:>6} {row['unlabelled']:>5} "
              f"{row['other_files']:>11} {row['unlocated']:>9} {len(row['errors'])}")
        for error in row["errors"]:
            print(f"    error: {error}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clones", type=Path, required=True, help="Where the clones live (outside this repo).")
    parser.add_argument("--source", default=RUN.DEFAULT_SOURCE, help="Clone source template ({repo}, {owner}, {name}).")
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.yaml")
    parser.add_argument("--labels", type=Path, default=HERE / "peer_labels.yaml")
    parser.add_argument("--npm-bin", type=Path, required=True, help="node_modules/.bin with agentlinter, claudelint.")
    parser.add_argument("--agnix", type=Path, required=True, help="The agnix executable (PyPI wheel).")
    parser.add_argument("--statewise-raw", type=Path, help="A run.py --raw file: StateWise's row of the table.")
    parser.add_argument("--only", action="append", default=[], help="Only this owner/name (repeatable).")
    parser.add_argument("--json", type=Path, help="Also write the table as JSON here.")
    parser.add_argument("--unlabelled", type=Path, help="Write unlabelled findings here, with the tools' messages "
                                                        "(for labelling by hand; never committed).")
    args = parser.parse_args(argv)
    manifest = yaml.safe_load(args.manifest.read_text(encoding="utf-8"))
    labels, by_rule = load_peer_labels(args.labels)
    runs: list[PeerRun] = []
    for item in manifest["repositories"]:
        repo = str(item["repo"])
        if args.only and repo not in args.only:
            continue
        clone = RUN.ensure_clone(repo, str(item["commit"]), args.clones, args.source)
        for peer in peers(args.npm_bin, args.agnix):
            runs.append(run_peer(peer, repo, clone))
    table = score(runs, labels, by_rule)
    if args.statewise_raw:
        table = {"statewise (defective)": statewise_row(args.statewise_raw, HERE / "labels.yaml"), **table}
    print_table(table)
    if args.json:
        args.json.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    if args.unlabelled:
        todo = [{"tool": f.tool, "repo": f.repo, "file": f.file, "line": f.line, "rule": f.rule, "sha256": f.sha256,
                 "message": run.messages[f]}
                for run in runs for f in run.findings if verdict_of(f, labels, by_rule) is None]
        args.unlabelled.write_text(yaml.safe_dump(todo, sort_keys=False, allow_unicode=True, width=200),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
