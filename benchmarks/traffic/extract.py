"""Build the real-agent-traffic corpus: every shell command public coding agents ran.

Reads the sources of ``benchmarks/traffic/sources.yaml`` from local bare copies of their
repositories (at the pinned commit, with ``git`` argv calls; nothing is fetched here), takes out
each shell command the agent ran, normalizes it, drops what bash itself would reject, dedupes,
and writes the corpus as JSON lines to a path outside the repository's tracked files (default
``benchmarks/out/traffic/corpus.jsonl``; ``benchmarks/out/`` is gitignored). Each line:
``{"sha256": ..., "command": ..., "sources": [source ids], "occurrences": n}``. The hand labels
(``labels.yaml``) are keyed by that sha256, so the repository never holds others' command text.

What counts as a command the agent ran:

* mini-swe-agent (``format: mini-swe-agent``): the one fenced ``bash`` block of an assistant
  message. A message with no such block, or with more than one, was rejected by the agent's own
  format check and never ran, so it is left out.
* SWE-agent 0.x (``format: swe-agent``): each step's ``action``, except SWE-agent's own tool
  commands (``open``, ``edit``, ``goto``, ``search_dir`` ...), which its harness interprets and
  which are not shell commands, and actions whose first line is prose (``DISCUSSION``).

Normalization: surrounding blank space removed; where the task's repository was checked out
(``workspace_roots``, e.g. ``/testbed``) becomes ``@REPO@``, which the benchmark replaces by its
own repository's path. A command ``bash -n`` rejects is not valid bash and is counted, not kept.

Usage::

    python benchmarks/traffic/extract.py [--mirrors DIR] [--sources FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_MIRRORS = Path("/work/.mirror")
DEFAULT_OUT = HERE.parent / "out" / "traffic" / "corpus.jsonl"
#: The placeholder for the task repository's root in a normalized command.
REPO_MARK = "@REPO@"
#: SWE-agent 0.x's own tool commands: its harness interprets them; they are not shell commands.
SWE_AGENT_TOOLS = frozenset({
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_dir", "search_file", "find_file",
    "submit", "exit_cost", "exit_context", "exit_format", "exit_error", "exit_forfeit", "skip", "filemap",
    "str_replace_editor", "insert", "append",
})
_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_INSTANCE = re.compile(r"^(?P<owner>[^_/]+)__(?P<name>.+)-\d+$")


@dataclass(frozen=True)
class Source:
    """One pinned source of trajectories (an entry of sources.yaml)."""

    id: str
    repo: str
    commit: str
    paths: tuple[str, ...]
    format: str
    agent: str
    model: str
    licence: str = ""
    workspace_roots: tuple[str, ...] = ()

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Source:
        unknown = set(raw) - {"id", "repo", "commit", "paths", "format", "agent", "model", "licence",
                              "workspace_roots"}
        if unknown:
            raise ValueError(f"source {raw.get('id')!r} has unknown fields {sorted(unknown)}")
        if not re.fullmatch(r"[0-9a-f]{40}", str(raw["commit"])):
            raise ValueError(f"source {raw['id']!r}: commit must be 40 hex digits")
        if raw["format"] not in READERS:
            raise ValueError(f"source {raw['id']!r}: unknown format {raw['format']!r}")
        return cls(id=raw["id"], repo=raw["repo"], commit=raw["commit"], paths=tuple(raw["paths"]),
                   format=raw["format"], agent=raw["agent"], model=raw["model"], licence=raw.get("licence", ""),
                   workspace_roots=tuple(raw.get("workspace_roots", ())))


def load_sources(path: Path) -> list[Source]:
    """The sources of a manifest, checked (unique ids, pinned commits, known formats)."""
    sources = [Source.of(item) for item in yaml.safe_load(path.read_text())["sources"]]
    ids = Counter(source.id for source in sources)
    repeated = [name for name, count in ids.items() if count > 1]
    if repeated:
        raise ValueError(f"source ids used twice: {repeated}")
    return sources


def git_dir(mirrors: Path, repo: str) -> Path:
    """The local bare copy of ``repo`` under ``mirrors``."""
    flat = repo.replace("/", "+")
    for candidate in (mirrors / flat / "repo", mirrors / f"{flat}.git", mirrors / flat):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    raise FileNotFoundError(f"no local copy of {repo} under {mirrors} (expected {mirrors / flat / 'repo'})")


def _git(directory: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={directory}", *args], check=True, capture_output=True,
                          timeout=300).stdout


def source_files(directory: Path, source: Source) -> Iterator[tuple[str, bytes]]:
    """(path, content) of every file of ``source`` at its commit."""
    names = _git(directory, "ls-tree", "-r", "--name-only", source.commit).decode().splitlines()
    wanted = sorted(name for name in names if any(fnmatch.fnmatch(name, glob) for glob in source.paths))
    if not wanted:
        raise FileNotFoundError(f"source {source.id}: no file at {source.commit} matches {list(source.paths)}")
    # One `git cat-file --batch` for all of them: a git process per file would take minutes.
    request = "".join(f"{source.commit}:{name}\n" for name in wanted).encode()
    output = subprocess.run(["git", f"--git-dir={directory}", "cat-file", "--batch"], input=request, check=True,
                            capture_output=True, timeout=600).stdout
    offset = 0
    for name in wanted:
        header_end = output.index(b"\n", offset)
        header = output[offset:header_end].split()
        if header[-1] == b"missing":
            raise FileNotFoundError(f"{source.id}: {name} missing at {source.commit}")
        size = int(header[2])
        yield name, output[header_end + 1: header_end + 1 + size]
        offset = header_end + 1 + size + 1


# --- readers: one per trajectory format ------------------------------------------------------


def mini_swe_agent_commands(data: Mapping[str, Any]) -> Iterator[str]:
    """The commands a mini-swe-agent 1.x trajectory ran: exactly one bash block per answer."""
    for message in data.get("messages", []):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, str):
            continue
        blocks = _BASH_BLOCK.findall(content)
        if len(blocks) == 1:
            yield blocks[0]


def swe_agent_commands(data: Mapping[str, Any]) -> Iterator[str]:
    """The shell commands of a SWE-agent 0.x trajectory (its own tool commands left out)."""
    for step in data.get("trajectory", []):
        action = str(step.get("action", "")).strip()
        first = action.split(None, 1)[0] if action else ""
        if not first or first in SWE_AGENT_TOOLS or first.startswith("DISCUSSION"):
            continue
        yield action


READERS = {"mini-swe-agent": mini_swe_agent_commands, "swe-agent": swe_agent_commands}


def instance_roots(source: Source, path: str) -> tuple[str, ...]:
    """Where the task's repository was checked out. SWE-agent 0.x put it at ``/<name>`` (the
    instance ``apache__dubbo-10638`` at ``/dubbo``); the manifest names the others."""
    roots = list(source.workspace_roots)
    if source.format == "swe-agent":
        stem = Path(path).name.split(".", 1)[0]
        match = _INSTANCE.match(stem)
        if match:
            roots.append(f"/{match['name']}")
    return tuple(roots)


def normalize(command: str, roots: Sequence[str]) -> str:
    """The command with blank space trimmed and the task repository's root as @REPO@."""
    text = command.strip()
    for root in sorted(roots, key=len, reverse=True):
        text = re.sub(rf"{re.escape(root)}(?=/|\b|$)(?![\w.-])", REPO_MARK, text)
    return text


def command_hash(command: str) -> str:
    """The key of a command in labels.yaml: sha256 of its normalized text (UTF-8)."""
    return hashlib.sha256(command.encode()).hexdigest()


def valid_bash(command: str) -> bool:
    """True if ``bash -n`` (parse only, nothing runs) accepts the command."""
    try:
        done = subprocess.run(["bash", "-n"], input=command, text=True, capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@dataclass
class Corpus:
    """Distinct commands with the sources they came from, and the counts of what was left out."""

    commands: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)  # source id -> commands read
    invalid: Counter[str] = field(default_factory=Counter)  # source id -> commands bash rejects
    files: Counter[str] = field(default_factory=Counter)

    def add(self, source: str, command: str) -> None:
        self.seen[source] += 1
        entry = self.commands.setdefault(command, {"sha256": command_hash(command), "command": command,
                                                   "sources": [], "occurrences": 0})
        entry["occurrences"] += 1
        if source not in entry["sources"]:
            entry["sources"].append(source)


def extract(sources: Sequence[Source], mirrors: Path, *, check_bash: bool = True, jobs: int = 2) -> Corpus:
    """Every distinct command of every source (read from the local copies under ``mirrors``)."""
    corpus = Corpus()
    for source in sources:
        directory = git_dir(mirrors, source.repo)
        reader = READERS[source.format]
        for path, content in source_files(directory, source):
            corpus.files[source.id] += 1
            data = json.loads(content)
            for command in reader(data):
                normalized = normalize(command, instance_roots(source, path))
                if normalized:
                    corpus.add(source.id, normalized)
    if check_bash:
        texts = list(corpus.commands)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            verdicts = list(pool.map(valid_bash, texts))
        for text, ok in zip(texts, verdicts, strict=True):
            if not ok:
                entry = corpus.commands.pop(text)
                for source in entry["sources"]:
                    corpus.invalid[source] += 1
    return corpus


def write_corpus(corpus: Corpus, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as handle:
        for entry in sorted(corpus.commands.values(), key=lambda e: e["sha256"]):
            handle.write(json.dumps(entry) + "\n")


def read_corpus(path: Path) -> list[dict[str, Any]]:
    """The corpus entries written by :func:`write_corpus`."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS,
                        help="folder with the local bare copies (default /work/.mirror)")
    parser.add_argument("--sources", type=Path, default=HERE / "sources.yaml")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-bash-check", action="store_true", help="keep commands bash -n rejects")
    args = parser.parse_args(argv)
    sources = load_sources(args.sources)
    corpus = extract(sources, args.mirrors, check_bash=not args.no_bash_check)
    write_corpus(corpus, args.out)
    per_source = Counter(source for entry in corpus.commands.values() for source in entry["sources"])
    for source in sources:
        print(f"{source.id:36} {source.model:28} files {corpus.files[source.id]:4}  commands run "
              f"{corpus.seen[source.id]:5}  distinct kept {per_source[source.id]:5}  not bash "
              f"{corpus.invalid[source.id]:3}")
    print(f"{len(corpus.commands)} distinct commands written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
