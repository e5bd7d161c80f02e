"""Whether the test paths a corpus command names existed where the agent ran it.

``benchmarks/real_traffic.py`` replays each command in its own mixed Python + Node repository,
not in the repository the agent worked in (SWE-bench's Django, sympy ...). A command such as
``pytest tests/test_x.py`` names a file of that repository, and the hook's ``test_paths_exist``
invariant checks that the path exists. To replay it honestly, the benchmark repository must
hold the paths the agent's repository held when the command ran, and only those.

The evidence is the command's own output in the trajectory (the trajectories hold what each
command printed): pytest that ran tests from a path (``collected 3 items``, ``2 passed``, the
module's name in its progress lines, ``ERROR collecting`` it) shows the path existed;
``file or directory not found: PATH`` / ``No such file or directory`` naming it shows it did
not. Anything else (pytest not installed, no output) is no evidence: the path is not created
and a stop on it is counted.

Which paths a command names is read by StateWise's own analyzer with the built-in contract,
exactly as the hook's ``test_paths_exist`` reads them (the first path of each ``test.run``
action, a ``/`` or ``.py`` in it, no ``::`` node id, no ``cd`` before it), in the replay's
repository layout: ``@REPO@`` is the workspace root.

Written to ``benchmarks/traffic/test_paths.yaml``: for each command (sha256 of its text), for
each path (the first 16 hex digits of the sha256 of its workspace-relative text, so that the
repository never holds others' text): ``existed``, ``missing``, ``unknown`` (no evidence) or
``conflict`` (occurrences of the same command disagree). The replay creates the ``existed``
paths before sending the command and removes them after.

The same file says, for each ``manage.py migrate`` (``django_databases``), which database the
agent's Django project used, read from the trajectory before the command: ``sqlite3`` when
``django.db.backends.sqlite3`` is the only engine any earlier command or output names (the
settings the agent wrote or printed), or when none is named and the project was made by
``django-admin startproject`` (whose settings use SQLite); else ``unknown``. The replay then
creates, in the folder the migration runs in, a ``manage.py`` and settings with that database
(the replay's own two lines, not the agent's files).

Usage::

    python benchmarks/traffic/test_paths.py [--mirrors DIR] [--corpus FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from extract import (  # noqa: E402
    _BASH_BLOCK,
    DEFAULT_MIRRORS,
    DEFAULT_OUT,
    REPO_MARK,
    SWE_AGENT_TOOLS,
    Source,
    git_dir,
    instance_roots,
    load_sources,
    normalize,
    read_corpus,
    source_files,
)

DEFAULT_EVIDENCE = HERE / "test_paths.yaml"
#: (sha256, path) found existing only by another output of the trajectory (for the summary).
SECONDARY: set[tuple[str, str]] = set()
#: (sha256, path) found existing only in the upstream repository the task was cut from.
UPSTREAM: set[tuple[str, str]] = set()
#: A SWE-bench-style task: its trajectory file is named owner__name-PULL_REQUEST.
_TASK = re.compile(r"^(?P<owner>[^_/]+)__(?P<name>.+)-(?P<number>\d+)$")
STATES = ("existed", "missing", "unknown", "conflict")
_MIGRATE = re.compile(r"\bmanage\.py\s+(?:migrate|flush)\b")
#: pytest ran tests: it collected some, or its summary counts outcomes.
_RAN = re.compile(r"collected [1-9]\d* items?|\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed)\b")
_NOT_FOUND = re.compile(r"not found|No such file or directory|does not exist|can't open file", re.IGNORECASE)


def path_key(path: str) -> str:
    """How a path is named in test_paths.yaml: the first 16 hex digits of its sha256."""
    return hashlib.sha256(path.encode()).hexdigest()[:16]


def named_test_paths(command: str, workspace: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The test paths the hook's ``test_paths_exist`` checks for ``command`` (its text with
    @REPO@ already replaced by ``workspace``), workspace-relative where inside it."""
    from statewise.commands import analyze_command
    from statewise.contract.loading import builtin_contract

    analysis = analyze_command(command, cwd=workspace, workspace=workspace, env=env,
                               contract=builtin_contract("coding"))
    found: list[str] = []
    for action in analysis.actions:
        if action.operation != "test.run":
            continue
        path, cwd = action.args.get("path"), action.args.get("cwd")
        if isinstance(path, str) and not cwd and re.search(r"(/|[.]py$)", path) and "::" not in path:
            if path not in found:
                found.append(path)
    return found


def commands_with_output(source: Source, data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(command, what it printed) for each command the trajectory ran."""
    if source.format == "mini-swe-agent":
        messages = list(data.get("messages", []))
        for index, message in enumerate(messages):
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, str):
                continue
            blocks = _BASH_BLOCK.findall(content)
            if len(blocks) != 1:
                continue
            following = messages[index + 1] if index + 1 < len(messages) else {}
            output = following.get("content") if following.get("role") == "user" else None
            yield blocks[0], output if isinstance(output, str) else ""
    else:
        for step in data.get("trajectory", []):
            action = str(step.get("action", "")).strip()
            first = action.split(None, 1)[0] if action else ""
            if not first or first in SWE_AGENT_TOOLS or first.startswith("DISCUSSION"):
                continue
            yield action, str(step.get("observation", ""))


def path_state(path: str, output: str) -> str:
    """existed, missing or unknown: what the command's output says about ``path``."""
    name = os.path.basename(path.rstrip("/"))
    if not name:
        return "unknown"
    for line in output.splitlines():
        if name in line and _NOT_FOUND.search(line):
            return "missing"
    if _RAN.search(output):
        return "existed"
    if re.search(rf"(?:^|[\s/]){re.escape(name)}(?:::|\s+[.FEsxX]+\s*(?:\[|$))", output, re.MULTILINE):
        return "existed"
    if re.search(rf"ERROR collecting \S*{re.escape(name)}", output):
        return "existed"
    return "unknown"


def seen_in_trajectory(path: str, outputs: Sequence[str], roots: Sequence[str]) -> str:
    """existed or unknown: whether another output of the same trajectory shows ``path`` as a
    file the agent's repository had (a line of ``grep -n``/``grep -r`` output starting with it,
    or a line of ``find``/``ls`` output that is it), with no output saying it was not found."""
    name = os.path.basename(path.rstrip("/"))
    prefixes = "|".join(re.escape(root.rstrip("/") + "/") for root in ("./", *roots))
    listed = re.compile(rf"^(?:{prefixes})?{re.escape(path)}(?::\d+[:-]|:\s|\s*$)", re.MULTILINE)
    shown = False
    for output in outputs:
        if any(name in line and _NOT_FOUND.search(line) and path in line for line in output.splitlines()):
            return "unknown"
        shown = shown or bool(listed.search(output))
    return "existed" if shown else "unknown"


def _git(directory: Path, *args: str) -> str:
    done = subprocess.run(["git", f"--git-dir={directory}", *args], capture_output=True, text=True, timeout=120)
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.cache
def task_base(mirrors: Path, trajectory: str) -> tuple[Path, str] | None:
    """The upstream repository's local copy and the commit the task's pull request branched
    from, for a trajectory named after its task (``sympy__sympy-17318``), when a copy of that
    repository is under ``mirrors`` and its history has the pull request's merge commit
    ("Merge pull request #N from ..."): the merge base of that merge's two parents. SWE-bench
    cuts a task at its pull request's base commit, so this is where the agent's checkout
    started (or a commit of the same branch point); None when any of it is not found."""
    match = _TASK.match(Path(trajectory).name.split(".", 1)[0])
    if match is None:
        return None
    try:
        directory = git_dir(mirrors, f"{match['owner']}/{match['name']}")
    except (FileNotFoundError, SystemExit):
        return None
    merges = _git(directory, "log", "--all", "--format=%P", f"--grep=^Merge pull request #{match['number']} from")
    parents = merges.splitlines()[0].split() if merges else []
    if len(parents) != 2:
        return None
    base = _git(directory, "merge-base", *parents)
    return (directory, base) if base else None


def upstream_state(path: str, mirrors: Path, trajectory: str) -> str:
    """existed or unknown: whether ``path`` is a file of the upstream repository at the task's
    base commit (:func:`task_base`). Not being there is no evidence of absence (the agent may
    have written the file), so it stays unknown."""
    found = task_base(mirrors, trajectory)
    if found is None or path.startswith(("/", "..")):
        return "unknown"
    directory, base = found
    kind = _git(directory, "cat-file", "-t", f"{base}:{path.rstrip('/')}")
    return "existed" if kind in ("blob", "tree") else "unknown"


def django_database(before: str) -> str:
    """sqlite3 or unknown: the database of the Django project an agent migrates, from what its
    earlier commands and outputs show (``before``)."""
    engines = set(re.findall(r"django\.db\.backends\.(\w+)", before))
    if engines == {"sqlite3"} or (not engines and re.search(r"\bstartproject\b", before)):
        return "sqlite3"
    return "unknown"


def migrate_folders(command: str, workspace: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The folders (workspace-relative, "." for the root) where ``command`` runs a Django
    migration, as StateWise's analyzer reads it."""
    from statewise.commands import analyze_command
    from statewise.contract.loading import builtin_contract

    analysis = analyze_command(command, cwd=workspace, workspace=workspace, env=env,
                               contract=builtin_contract("coding"))
    folders = []
    for action in analysis.actions:
        if action.operation == "db.migrate" and action.args.get("framework") == "django":
            folder = str(action.args.get("cwd") or ".")
            if folder not in folders:
                folders.append(folder)
    return folders


def combine(states: Sequence[str]) -> str:
    """One state for a command run more than once: agreement, else conflict; occurrences with
    no evidence do not count against the others."""
    known = {state for state in states if state != "unknown"}
    if not known:
        return "unknown"
    return known.pop() if len(known) == 1 else "conflict"


def build(sources: Sequence[Source], mirrors: Path, wanted: set[str],
          databases: dict[str, str] | None = None, upstream: Path | None = None) -> dict[str, dict[str, str]]:
    """sha256 -> path key -> state, for the corpus commands in ``wanted`` that name test paths;
    ``databases`` gets sha256 -> the Django database of each ``manage.py migrate``; with
    ``upstream`` (a folder of copies of the tasks' repositories) a path no output speaks of is
    looked up in the task's repository at its base commit (:func:`upstream_state`)."""
    from extract import command_hash

    workspace = Path(tempfile.mkdtemp(prefix="statewise-test-paths-"))
    env = {**os.environ}
    env.pop("VIRTUAL_ENV", None)
    named: dict[str, list[str]] = {}
    seen: dict[str, dict[str, list[str]]] = {}
    for source in sources:
        directory = git_dir(mirrors, source.repo)
        for name, content in source_files(directory, source):
            data = json.loads(content)
            ran = list(commands_with_output(source, data))
            outputs = [output for _, output in ran]
            roots = instance_roots(source, name)
            for at, (command, output) in enumerate(ran):
                text = normalize(command, roots)
                sha = command_hash(text)
                if sha not in wanted:
                    continue
                if databases is not None and _MIGRATE.search(text):
                    before = "\n".join(f"{c}\n{o}" for c, o in ran[:at])
                    state = django_database(before)
                    known = databases.get(sha)
                    databases[sha] = state if known in (None, state) else "conflict"
                if sha not in named:
                    named[sha] = named_test_paths(text.replace(REPO_MARK, str(workspace)), workspace, env)
                for path in named[sha]:
                    state = path_state(path, output)
                    if state == "unknown":  # its own output says nothing: the rest of the trajectory
                        state = seen_in_trajectory(path, outputs, roots)
                        if state == "existed":
                            SECONDARY.add((sha, path))
                    if state == "unknown" and upstream is not None:  # the repository the task was cut from
                        state = upstream_state(path, upstream, name)
                        if state == "existed":
                            UPSTREAM.add((sha, path))
                    seen.setdefault(sha, {}).setdefault(path, []).append(state)
    return {sha: {path_key(path): combine(states) for path, states in sorted(paths.items())}
            for sha, paths in sorted(seen.items())}


def load_databases(path: Path = DEFAULT_EVIDENCE) -> dict[str, str]:
    """sha256 -> the database of the agent's Django project (test_paths.yaml's django_databases)."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    found = {str(k): str(v) for k, v in (data.get("django_databases") or {}).items()}
    bad = [k for k, v in found.items() if not re.fullmatch(r"[0-9a-f]{64}", k) or v not in ("sqlite3", "unknown",
                                                                                             "conflict")]
    if bad:
        raise ValueError(f"test_paths.yaml: django_databases entries {bad[:3]} are not sha256: sqlite3|unknown")
    return found


def load_evidence(path: Path = DEFAULT_EVIDENCE) -> dict[str, dict[str, str]]:
    """sha256 -> path key -> state, as test_paths.yaml holds it (empty when it is absent)."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    evidence: dict[str, dict[str, str]] = {}
    for sha, paths in (data.get("commands") or {}).items():
        if not re.fullmatch(r"[0-9a-f]{64}", str(sha)):
            raise ValueError(f"test_paths.yaml: {sha!r} is not a sha256")
        for key, state in (paths or {}).items():
            if not re.fullmatch(r"[0-9a-f]{16}", str(key)) or state not in STATES:
                raise ValueError(f"test_paths.yaml: {sha}: {key}: {state!r}")
        evidence[str(sha)] = {str(k): str(v) for k, v in (paths or {}).items()}
    return evidence


HEADER = """\
# Whether the test paths each real-traffic command names existed where the agent ran it, read
# from the command's own output in the trajectory (benchmarks/traffic/test_paths.py; how, and
# what counts as evidence, is said there). Keys: the sha256 of the command's text (as in
# labels.yaml), then the first 16 hex digits of the sha256 of each path (workspace-relative);
# values: existed, missing, unknown (no evidence) or conflict (occurrences disagree).
# benchmarks/real_traffic.py creates the `existed` paths before sending the command.
# django_databases: for each `manage.py migrate` (sha256), the database of the agent's Django
# project (sqlite3 or unknown); the replay makes a manage.py with such settings where it runs.
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--sources", type=Path, default=HERE / "sources.yaml")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--out", type=Path, default=DEFAULT_EVIDENCE)
    parser.add_argument("--upstream", type=Path, default=None, metavar="DIR",
                        help="copies of the tasks' own repositories (owner+name/repo, as the fetch tool makes them): "
                             "a path no output speaks of is looked up at the task's base commit")
    args = parser.parse_args(argv)
    # Only commands that can name a test path are analyzed (the analyzer costs a few ms each).
    wanted = {e["sha256"] for e in read_corpus(args.corpus)
              if re.search(r"\b(?:py\.?test|tox|nox|runtests|manage\.py)\b", e["command"])}
    databases: dict[str, str] = {}
    evidence = build(load_sources(args.sources), args.mirrors, wanted, databases, args.upstream)
    evidence = {sha: paths for sha, paths in evidence.items() if paths}
    args.out.write_text(HEADER + yaml.safe_dump({"commands": evidence, "django_databases": databases},
                                                sort_keys=True, width=200))
    states = Counter(state for paths in evidence.values() for state in paths.values())
    print(f"{len(evidence)} commands name test paths; paths: "
          + ", ".join(f"{state} {states[state]}" for state in STATES)
          + f" ({len(SECONDARY)} existed by another output of the same trajectory only, "
            f"{len(UPSTREAM)} by the task's upstream repository at its base commit only)")
    print(f"{len(databases)} commands run a Django migration; their database: "
          + ", ".join(f"{s} {n}" for s, n in sorted(Counter(databases.values()).items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
