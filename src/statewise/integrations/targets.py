"""Unknown programs that name a protected target (issue 22, item 5).

A command no reader and no command rule understands is *unguarded*: StateWise does not know
what it does, and it runs (docs/shell.md, "Decisions"). That stays so, except when its words
name something the developer's records protect:

* a path under ``fs.protected_paths`` (or the project's ``.statewise/protected``);
* a protected branch (``repository.protected_branches``) together with a configured remote;
* a host, cluster, namespace, workspace, profile or stage ``infra.production_targets`` lists.

Then the call is the operation ``shell.protected_target`` (declared in the built-in catalogue,
``requires_approval``): the hook asks the developer, naming the record and the target.
:data:`TARGET_KEYS` says which records protect targets of which kind (the slot the target fills).

Only stored records and the project's file are read (no verifier runs): this check costs a
store lookup, not a remote call, on a command StateWise would otherwise let through unexamined.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from statewise.actions import Action
from statewise.commands.containers import CONTAINER_PROGRAMS, container_path_words
from statewise.contract import Contract
from statewise.records import Retrieval
from statewise.scopes import TaskScope
from statewise.store import Store
from statewise.workspace import derive_task_scope, find_repository_root

__all__ = ["PROTECTED_TARGET", "TARGET_KEYS", "protected_target_actions"]

#: The operation an unknown program naming a protected target becomes.
PROTECTED_TARGET = "shell.protected_target"
#: Seconds for the read-only git queries (the repository root, the remotes).
GIT_TIMEOUT = 3.0
#: Programs whose every effect the normalizer reads itself: an unguarded git command (fetch,
#: pull, commit, log) names branches and remotes as its ordinary work.
_READ_BY_THE_NORMALIZER = frozenset({"git"})
#: Words before the program that do not change which program runs (a prefix, a wrapper).
_WRAPPERS = frozenset({"sudo", "doas", "env", "nohup", "time", "nice", "ionice", "command", "exec", "stdbuf",
                       "setsid", "timeout"})
_DECLARED_FILE = ".statewise/protected"
#: The slot a target fills -> the keys whose stored values protect targets of that kind.
TARGET_KEYS: dict[str, tuple[str, ...]] = {
    "path": ("fs.protected_paths", "fs.declared_protected_paths"),
    "branch": ("repository.protected_branches",),
    "target": ("infra.production_targets",),
}


def protected_target_actions(parts: Sequence[str], *, workspace: Path, store: Store | None,
                             scope: TaskScope | None, contract: Contract, nested: bool = False) -> list[Action]:
    """One ``shell.protected_target`` action per unguarded command in ``parts`` whose words name
    a protected target (the first such target), or none. Empty when the contract does not
    declare the operation. Without a ``store`` only the project's ``.statewise/protected`` is
    read; without a ``scope`` it is derived from ``workspace`` when the store holds such records.
    With ``nested``, the words of a quoted word (a ``bash -c`` body, an ssh command) count too,
    and a program the normalizer reads is not skipped: for a command StateWise cannot check."""
    spec = contract.operations.get(PROTECTED_TARGET)
    if spec is None or not parts:
        return []
    commands = [(part, words) for part in parts if (words := _program_words(part, nested=nested))]
    if not commands:
        return []
    keys = {slot: tuple(k for k in TARGET_KEYS.get(slot, ()) if contract.state_spec(k) is not None)
            for slot in spec.slots}
    wanted = sorted({k for ks in keys.values() for k in ks})
    root = find_repository_root(workspace)
    retrieval = Retrieval(task="", records=[])
    if store is not None:
        # A first look needs no git: the workspace's own records, and (as near misses) any record
        # of these keys anywhere. Only when the store holds some is the task's scope derived
        # (its repository and branch cost a git call each) and the records read in it.
        probe = store.retrieve(TaskScope(workspace=str(workspace)), keys=wanted, near_miss_limit=1)
        if probe.records or probe.near_misses:
            retrieval = store.retrieve(scope or derive_task_scope(workspace), keys=wanted, near_miss_limit=0)
    if not retrieval.records and (root is None or not (root / _DECLARED_FILE).is_file()):
        # no records and no project file: nothing is protected here, but a configuration file
        # the command names may still place it in production
        return _configured_production(commands, workspace, root, [])
    paths = _listed(retrieval, keys.get("path", ()), root)
    branches = _listed(retrieval, keys.get("branch", ()), root)
    targets = _listed(retrieval, keys.get("target", ()), root)
    if not (paths or branches or targets):
        return _configured_production(commands, workspace, root, [])
    remotes = _remotes(workspace) if branches else frozenset()
    found: list[Action] = []
    for part, words in commands:
        hit = (_path_hit(_path_words(words), paths, workspace, root) or _branch_hit(words[1:], branches, remotes)
               or _target_hit(words[1:], targets))
        if hit is None:
            continue
        kind, target, key = hit
        record = retrieval.get(key)
        marks = f"record {record.id} ({key})" if record is not None else key
        found.append(Action(
            tool="shell", operation=PROTECTED_TARGET, target=target,
            args={"part": part[:2000], kind: target, "record": key, "program": words[0],
                  **({"record_id": record.id} if record is not None else {})},
            risk="high",
            reason=(f"`{words[0]}` is not a program StateWise reads, and it names {target}, which {marks} "
                    "protects")))
    named = {a.args.get("part") for a in found}
    found += _configured_production([(p, w) for p, w in commands if p[:2000] not in named], workspace, root,
                                    targets)
    return found


#: The options that name a program's configuration file.
_CONFIG_OPTIONS = frozenset({"--config", "-c", "--config-file", "--configfile", "--conf", "-f", "--file",
                             "--env-file", "--settings"})
#: Configuration files read for the environment they name: at most this many bytes.
_CONFIG_BYTES = 65536
#: A line that sets the environment (or stage) to production: `environment = "production"`,
#: `env: prod`, `"stage": "production"`.
_PRODUCTION_LINE = re.compile(
    r"""^\s*["']?(?:environment|env|stage|deploy_env|target_env|deployment_environment)["']?\s*[=:]\s*"""
    r"""["']?(production|prod)["']?\s*,?\s*(?:#.*)?$""", re.IGNORECASE)


def _configured_production(commands: Sequence[tuple[str, list[str]]], workspace: Path, root: Path | None,
                           targets: list[tuple[str, str]]) -> list[Action]:
    """Unknown programs given a configuration file (``--config FILE``, ``-f FILE``) whose text
    sets the environment to production, or names a host ``infra.production_targets`` lists: the
    file places the command there, though its words do not say so (``deployctl release --config
    deploy/app.toml``). Asked, naming the file, its line and the target. Only files inside the
    repository, at most :data:`_CONFIG_BYTES`, are read."""
    if root is None:
        return []
    found: list[Action] = []
    for part, words in commands:
        for file in _config_files(words[1:]):
            hit = _production_in(file, workspace, root, targets)
            if hit is None:
                continue
            target, line, key = hit
            found.append(Action(
                tool="shell", operation=PROTECTED_TARGET, target=target,
                args={"part": part[:2000], "target": target, "record": key, "program": words[0], "path": file},
                risk="high",
                reason=(f"`{words[0]}` is not a program StateWise reads, and its configuration file {file} "
                        f"places it in {target} (line {line}, {key})")))
            break
    return found


def _config_files(words: Sequence[str]) -> list[str]:
    files = []
    for index, word in enumerate(words):
        if "=" in word and word.startswith("--") and word.split("=", 1)[0] in _CONFIG_OPTIONS:
            files.append(word.split("=", 1)[1])
        elif word in _CONFIG_OPTIONS and index + 1 < len(words):
            files.append(words[index + 1])
    return files


def _production_in(file: str, workspace: Path, root: Path, targets: list[tuple[str, str]]
                   ) -> tuple[str, int, str] | None:
    path = os.path.realpath(os.path.join(str(workspace), os.path.expanduser(file)))
    if not path.startswith(str(root.resolve()) + os.sep):
        return None
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _CONFIG_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for number, line in enumerate(lines, 1):
        match = _PRODUCTION_LINE.match(line)
        if match:
            return match.group(1), number, f"{file} line {number}"
        for name, key in targets:
            if len(name) > 2 and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line):
                return name, number, key
    return None


def _program_words(part: str, *, nested: bool = False) -> list[str]:
    """The words of ``part`` from its program on, or [] when it is a program the normalizer
    reads itself (unless ``nested``) or cannot be split; with ``nested`` the words of each
    quoted word that holds several follow it."""
    try:
        words = shlex.split(part, comments=False)
    except ValueError:
        return []
    if nested:
        inner: list[str] = []
        for word in words:
            inner.append(word)
            if any(c.isspace() for c in word):
                try:
                    inner += shlex.split(word, comments=False)
                except ValueError:
                    continue
        return inner
    while words and (("=" in words[0] and not words[0].startswith(("=", "-"))) or words[0] in _WRAPPERS
                     or words[0].startswith("-")):
        words = words[1:]
    if not words or os.path.basename(words[0]) in _READ_BY_THE_NORMALIZER:
        return []
    return words


def _listed(retrieval: Retrieval, keys: Iterable[str], root: Path | None) -> list[tuple[str, str]]:
    """(value, key) for every value the records of ``keys`` hold (a list, or one string), and for
    ``fs.declared_protected_paths`` the lines of the project's file when no record holds them."""
    found: list[tuple[str, str]] = []
    for key in keys:
        record = retrieval.get(key)
        values = record.value if record is not None else None
        if values is None and key == "fs.declared_protected_paths" and root is not None:
            values = _declared(root)
            key = _DECLARED_FILE
        if isinstance(values, str):
            values = [values]
        if isinstance(values, list):
            found += [(str(v), key) for v in values if str(v).strip()]
    return found


def _declared(root: Path) -> list[str] | None:
    try:
        text = (root / _DECLARED_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = (line.strip() for line in text.splitlines())
    return [line.rstrip("/") or "/" for line in lines if line and not line.startswith("#")]


def _path_words(words: Sequence[str]) -> list[str]:
    """The words after the program that can name a path here: for a container tool, not the
    names of its volumes, containers or images (commands/containers.py), but its bind mounts."""
    if os.path.basename(words[0]) in CONTAINER_PROGRAMS:
        return container_path_words(words[1:])
    return list(words[1:])


def _path_hit(words: Sequence[str], protected: list[tuple[str, str]], workspace: Path,
              root: Path | None) -> tuple[str, str, str] | None:
    if not protected or root is None:
        return None
    for word in words:
        # an option's attached value is a word too (--config=.env)
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if not value or value.startswith("-") or "://" in value:
            continue
        written = os.path.normpath(os.path.join(str(workspace), os.path.expanduser(value)))
        resolved = os.path.realpath(written)
        for entry, key in protected:
            base = os.path.normpath(os.path.join(str(root), entry))
            if any(candidate == base or candidate.startswith(base.rstrip("/") + "/")
                   for candidate in (written, resolved)):
                return "path", value, key
    return None


def _branch_hit(words: Sequence[str], protected: list[tuple[str, str]],
                remotes: frozenset[str]) -> tuple[str, str, str] | None:
    if not protected or not remotes or not any(w in remotes for w in words):
        return None
    for word in words:
        branch = word.split(":", 1)[1] if ":" in word and "://" not in word else word
        branch = branch.removeprefix("+").removeprefix("refs/heads/")
        for pattern, key in protected:
            if branch and (branch == pattern or fnmatch.fnmatchcase(branch, pattern)):
                return "branch", branch, key
    return None


def _target_hit(words: Sequence[str], listed: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        host = value.rsplit("@", 1)[-1].split(":", 1)[0]
        for name, key in listed:
            if name in (value, host):
                return "target", name, key
    return None


def _git(workspace: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _remotes(workspace: Path) -> frozenset[str]:
    return frozenset((_git(workspace, "remote") or "").split())
