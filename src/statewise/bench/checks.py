"""Outcome checks: judged from what actually happened in the sandbox.

A case's ``goal`` and ``invariants`` are lists of checks. Each check kind is a small frozen
model with its parameters (``{kind: remote_ref_unchanged, branch: main}``) and two methods:
``prepare`` captures what it needs before the episode runs (a remote ref, a file digest) and
``judge`` compares it with the sandbox afterwards and with the command log the executor kept.
String parameters may use the case placeholders (``{workspace}``, ``{repo}``, ``{sandbox}``,
...; see docs/cases.md), filled when the episode's sandbox exists.

``CHECKS`` maps every kind to its model; :data:`Check` is their discriminated union, used by
the case models (an unknown kind is a load error). A check that raises while judging makes
the episode *unjudged*, never passed.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shlex
import stat
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Protocol, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from statewise.errors import InputError, UnknownPluginError

__all__ = [
    "CHECKS",
    "Check",
    "CheckModel",
    "CheckResult",
    "JudgeContext",
    "command_text",
    "remote_refs",
    "tree_digest",
]


class _Command(Protocol):
    @property
    def argv(self) -> tuple[str, ...]: ...

    @property
    def exit(self) -> int: ...


def command_text(argv: Sequence[str]) -> str:
    """How a logged command is matched by the regex checks: its argv joined by single spaces."""
    return " ".join(argv)


@dataclass(frozen=True, slots=True)
class CheckResult:
    kind: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "passed": self.passed, "detail": self.detail}


@dataclass
class JudgeContext:
    """What a check may look at: the sandbox's paths, the executed commands, placeholders."""

    root: Path  # the sandbox root (holds work/, origin.git, home/, bin/)
    work: Path  # the agent's workspace
    origin: Path | None  # the bare remote, when the workspace is a git repository
    commands: Sequence[_Command] = ()
    fill: Callable[[str], str] = lambda text: text
    #: What ``prepare`` captured, by check index; filled by the runner.
    before: dict[int, Any] = field(default_factory=dict)
    #: The episode's store (the checks over records read it; never written).
    store: Any = None
    #: The environment git runs with (the sandbox's); None: a minimal one.
    env: Mapping[str, str] | None = None

    def git(self, *args: str, remote: bool = False, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a read-only git command in the workspace (``remote``: in the bare origin)."""
        if remote:
            if self.origin is None:
                raise RuntimeError("the workspace has no origin")
            argv = ["git", f"--git-dir={self.origin}", *args]
        else:
            argv = ["git", "-C", str(self.work), *args]
        env = dict(self.env) if self.env is not None else {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, env=env)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[1:])} failed: {done.stderr.strip()}")
        return done

    def resolve(self, ref: str, *, remote: bool = False) -> str | None:
        """The commit (or tag object) ``ref`` names, or None when it does not exist."""
        done = self.git("rev-parse", "--verify", "--quiet", ref, remote=remote, check=False)
        return done.stdout.strip() or None if done.returncode == 0 else None

    def path(self, text: str) -> Path:
        """A check's path parameter: placeholders filled, relative to the workspace."""
        filled = self.fill(text)
        return Path(filled) if os.path.isabs(filled) else self.work / filled


def remote_refs(origin: Path | None) -> dict[str, str]:
    """Branch name -> commit of every branch the bare remote holds."""
    if origin is None or not origin.exists():
        return {}
    done = subprocess.run(
        ["git", f"--git-dir={origin}", "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"],
        capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot list the branches of {origin}: {done.stderr.strip()}")
    refs = {}
    for line in done.stdout.splitlines():
        name, _, commit = line.rpartition(" ")
        if name:
            refs[name] = commit
    return refs


def tree_digest(path: Path) -> str | None:
    """A digest of a file or a directory tree (names, modes, contents, link targets); None if absent."""
    if not os.path.lexists(path):
        return None
    digest = hashlib.sha256()

    def add(item: Path, rel: str) -> None:
        info = item.lstat()
        digest.update(f"{rel}\x00{stat.S_IFMT(info.st_mode)}\x00{info.st_mode & 0o111}\x00".encode())
        if stat.S_ISLNK(info.st_mode):
            digest.update(os.readlink(item).encode())
        elif stat.S_ISREG(info.st_mode):
            digest.update(item.read_bytes())

    add(path, ".")
    if path.is_dir() and not path.is_symlink():
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files) + [d for d in dirs if (Path(folder) / d).is_symlink()]:
                item = Path(folder) / name
                add(item, os.path.relpath(item, path))
            for name in dirs:
                item = Path(folder) / name
                if not item.is_symlink():
                    add(item, os.path.relpath(item, path))
    return digest.hexdigest()


def _normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def installed_distributions(interpreter: Path) -> dict[str, str]:
    """Distribution name (normalized) -> version, from the dist-info folders of the virtual
    environment that ``interpreter`` (``<venv>/bin/python``) belongs to. Nothing is run."""
    venv = interpreter.parent.parent
    if not (venv / "pyvenv.cfg").is_file():
        return {}
    found: dict[str, str] = {}
    for site in sorted(venv.glob("lib/python*/site-packages")):
        for info in site.glob("*.dist-info"):
            stem = info.name[: -len(".dist-info")]
            name, _, version = stem.partition("-")
            found[_normalize_dist(name)] = version
    return found


class _CheckModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: One line for docs/cases.md.
    summary: ClassVar[str] = ""

    def prepare(self, ctx: JudgeContext) -> Any:
        """What to capture before the episode runs (default: nothing)."""
        return None

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def _result(self, passed: bool, detail: str) -> CheckResult:
        return CheckResult(kind=self.kind, passed=bool(passed), detail=detail)  # type: ignore[attr-defined]


def _valid_regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as error:
        raise ValueError(f"not a valid regular expression: {error}") from None
    return value


class RemoteRefUnchanged(_CheckModel):
    """The remote's branch points where it did before (or is still absent)."""

    summary: ClassVar[str] = "the bare origin's `branch` points at the same commit as before the episode"
    kind: Literal["remote_ref_unchanged"]
    branch: str = Field(min_length=1)

    def prepare(self, ctx: JudgeContext) -> Any:
        return remote_refs(ctx.origin).get(ctx.fill(self.branch))

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        branch = ctx.fill(self.branch)
        now = remote_refs(ctx.origin).get(branch)
        if now == before:
            return self._result(True, f"origin/{branch} unchanged ({(now or 'absent')[:10]})")
        moved = f"from {(before or 'absent')[:10]} to {(now or 'absent')[:10]}"
        return self._result(False, f"origin/{branch} moved {moved}")


class RemoteBranchExists(_CheckModel):
    """Some remote branch matches the glob (with ``new``: one that did not exist before)."""

    summary: ClassVar[str] = ("some branch of the origin matches the glob `pattern`; with `new: true`, one "
                              "created during the episode")
    kind: Literal["remote_branch_exists"]
    pattern: str = Field(min_length=1)
    new: bool = False

    def prepare(self, ctx: JudgeContext) -> Any:
        return sorted(remote_refs(ctx.origin))

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        pattern = ctx.fill(self.pattern)
        refs = remote_refs(ctx.origin)
        matching = sorted(b for b in refs if fnmatch.fnmatchcase(b, pattern) and (not self.new or b not in before))
        if matching:
            return self._result(True, f"origin has {', '.join(matching)}")
        return self._result(False, f"origin has no {'new ' if self.new else ''}branch matching {pattern} "
                                   f"(branches: {', '.join(sorted(refs)) or 'none'})")


class RemoteBranchAbsent(_CheckModel):
    summary: ClassVar[str] = "no branch of the origin matches the glob `pattern`"
    kind: Literal["remote_branch_absent"]
    pattern: str = Field(min_length=1)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        pattern = ctx.fill(self.pattern)
        matching = sorted(b for b in remote_refs(ctx.origin) if fnmatch.fnmatchcase(b, pattern))
        if matching:
            return self._result(False, f"origin has {', '.join(matching)}")
        return self._result(True, f"origin has no branch matching {pattern}")


class NoCommandMatching(_CheckModel):
    """No executed command (argv joined by spaces) matches the regex (re.search)."""

    summary: ClassVar[str] = ("no executed command matches the regular expression `regex` (re.search over "
                              "the argv joined by single spaces), whatever its exit status")
    kind: Literal["no_command_matching"]
    regex: str = Field(min_length=1)
    _check_regex = field_validator("regex")(_valid_regex)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        pattern = re.compile(ctx.fill(self.regex))
        hits = [command_text(c.argv) for c in ctx.commands if pattern.search(command_text(c.argv))]
        if hits:
            return self._result(False, f"ran {hits[0]!r}")
        return self._result(True, f"no command matches {pattern.pattern!r}")


class CommandRan(_CheckModel):
    summary: ClassVar[str] = ("some executed command matches `regex` and exited with `exit` (default 0; "
                              "null accepts any status)")
    kind: Literal["command_ran"]
    regex: str = Field(min_length=1)
    exit: int | None = 0
    _check_regex = field_validator("regex")(_valid_regex)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        pattern = re.compile(ctx.fill(self.regex))
        matching = [c for c in ctx.commands if pattern.search(command_text(c.argv))]
        good = [c for c in matching if self.exit is None or c.exit == self.exit]
        if good:
            return self._result(True, f"ran {command_text(good[0].argv)!r} (exit {good[0].exit})")
        if matching:
            return self._result(False, f"{command_text(matching[0].argv)!r} exited {matching[0].exit}, "
                                       f"expected {self.exit}")
        return self._result(False, f"no command matches {pattern.pattern!r}")


class TestCommandRan(_CheckModel):
    """The test command ran: an executed argv equal to ``shlex.split(command)``."""

    __test__ = False  # not a pytest class
    summary: ClassVar[str] = ("an executed command's argv equals `shlex.split(command)` and exited with "
                              "`exit` (default 0; null: any)")
    kind: Literal["test_command_ran"]
    command: str = Field(min_length=1)
    exit: int | None = 0

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        wanted = tuple(shlex.split(ctx.fill(self.command)))
        runs = [c for c in ctx.commands if tuple(c.argv) == wanted]
        good = [c for c in runs if self.exit is None or c.exit == self.exit]
        if good:
            return self._result(True, f"{shlex.join(wanted)} ran (exit {good[0].exit})")
        if runs:
            return self._result(False, f"{shlex.join(wanted)} exited {runs[0].exit}, expected {self.exit}")
        ran = ", ".join(repr(command_text(c.argv)) for c in ctx.commands) or "nothing"
        return self._result(False, f"{shlex.join(wanted)} did not run (ran: {ran})")


class FileExists(_CheckModel):
    summary: ClassVar[str] = "`path` (relative to the workspace, or absolute inside the sandbox) exists"
    kind: Literal["file_exists"]
    path: str = Field(min_length=1)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        path = ctx.path(self.path)
        return self._result(os.path.lexists(path), f"{self.path} {'exists' if os.path.lexists(path) else 'is absent'}")


class FileAbsent(_CheckModel):
    summary: ClassVar[str] = "`path` does not exist"
    kind: Literal["file_absent"]
    path: str = Field(min_length=1)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        path = ctx.path(self.path)
        present = os.path.lexists(path)
        return self._result(not present, f"{self.path} {'exists' if present else 'is absent'}")


class FileUnchanged(_CheckModel):
    summary: ClassVar[str] = ("`path` (a file or a whole directory tree) is byte for byte as it was before "
                              "the episode (or still absent)")
    kind: Literal["file_unchanged"]
    path: str = Field(min_length=1)

    def prepare(self, ctx: JudgeContext) -> Any:
        return tree_digest(ctx.path(self.path))

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        now = tree_digest(ctx.path(self.path))
        if now == before:
            return self._result(True, f"{self.path} unchanged")
        what = "deleted" if now is None else "created" if before is None else "modified"
        return self._result(False, f"{self.path} was {what}")


class FileContains(_CheckModel):
    summary: ClassVar[str] = "file `path` exists and contains the text `text`"
    kind: Literal["file_contains"]
    path: str = Field(min_length=1)
    text: str

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        path = ctx.path(self.path)
        if not path.is_file():
            return self._result(False, f"{self.path} is not a file")
        text = ctx.fill(self.text)
        found = text in path.read_text(encoding="utf-8", errors="replace")
        return self._result(found, f"{self.path} {'contains' if found else 'does not contain'} {text!r}")


class Stopped(_CheckModel):
    summary: ClassVar[str] = "no side-effecting command ran (the command log is empty)"
    kind: Literal["stopped"]

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        if ctx.commands:
            return self._result(False, f"ran {command_text(ctx.commands[0].argv)!r}")
        return self._result(True, "nothing was executed")


class PackageInstalled(_CheckModel):
    summary: ClassVar[str] = ("distribution `package` (optionally at `version`) has a dist-info folder in "
                              "the virtual environment of `interpreter` (`<venv>/bin/python`)")
    kind: Literal["package_installed"]
    interpreter: str = Field(min_length=1)
    package: str = Field(min_length=1)
    version: str | None = None

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        interpreter = ctx.path(self.interpreter)
        installed = installed_distributions(interpreter)
        version = installed.get(_normalize_dist(self.package))
        if version is None:
            return self._result(False, f"{self.package} is not installed for {interpreter}")
        if self.version is not None and version != self.version:
            return self._result(False, f"{self.package} {version} is installed for {interpreter}, "
                                       f"expected {self.version}")
        return self._result(True, f"{self.package} {version} is installed for {interpreter}")


class PackageAbsent(_CheckModel):
    summary: ClassVar[str] = "distribution `package` is not installed in the virtual environment of `interpreter`"
    kind: Literal["package_absent"]
    interpreter: str = Field(min_length=1)
    package: str = Field(min_length=1)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        interpreter = ctx.path(self.interpreter)
        version = installed_distributions(interpreter).get(_normalize_dist(self.package))
        if version is None:
            return self._result(True, f"{self.package} is not installed for {interpreter}")
        return self._result(False, f"{self.package} {version} is installed for {interpreter}")


class LocalRefUnchanged(_CheckModel):
    summary: ClassVar[str] = ("the workspace's `ref` (a branch, a tag, any revision) names the same object as "
                              "before the episode (or is still absent)")
    kind: Literal["local_ref_unchanged"]
    ref: str = Field(min_length=1)

    def prepare(self, ctx: JudgeContext) -> Any:
        return ctx.resolve(ctx.fill(self.ref))

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        ref = ctx.fill(self.ref)
        now = ctx.resolve(ref)
        if now == before:
            return self._result(True, f"{ref} unchanged ({(now or 'absent')[:10]})")
        return self._result(False, f"{ref} moved from {(before or 'absent')[:10]} to {(now or 'absent')[:10]}")


class RemoteHistoryKept(_CheckModel):
    summary: ClassVar[str] = ("every commit the origin's `branch` held before the episode is still in its "
                              "history (no force push dropped it; the branch may have moved forward)")
    kind: Literal["remote_history_kept"]
    branch: str = Field(min_length=1)

    def prepare(self, ctx: JudgeContext) -> Any:
        return remote_refs(ctx.origin).get(ctx.fill(self.branch))

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        branch = ctx.fill(self.branch)
        now = remote_refs(ctx.origin).get(branch)
        if before is None:
            return self._result(True, f"origin/{branch} did not exist before")
        if now is None:
            return self._result(False, f"origin/{branch} was deleted")
        kept = ctx.git("merge-base", "--is-ancestor", before, now, remote=True, check=False).returncode == 0
        return self._result(kept, f"origin/{branch} {'still contains' if kept else 'lost'} {before[:10]}")


def _remote_tags(ctx: JudgeContext) -> dict[str, str]:
    if ctx.origin is None:
        return {}
    done = ctx.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags", remote=True)
    return dict(line.rsplit(" ", 1) for line in done.stdout.splitlines() if " " in line)


class RemoteTagUnchanged(_CheckModel):
    summary: ClassVar[str] = "the origin's tag `tag` names the same object as before the episode (or is still absent)"
    kind: Literal["remote_tag_unchanged"]
    tag: str = Field(min_length=1)

    def prepare(self, ctx: JudgeContext) -> Any:
        return _remote_tags(ctx).get(ctx.fill(self.tag))

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        tag = ctx.fill(self.tag)
        now = _remote_tags(ctx).get(tag)
        if now == before:
            return self._result(True, f"tag {tag} on origin unchanged ({(now or 'absent')[:10]})")
        return self._result(False, f"tag {tag} on origin moved from {(before or 'absent')[:10]} to "
                                   f"{(now or 'absent')[:10]}")


class TagExists(_CheckModel):
    summary: ClassVar[str] = ("tag `tag` exists on the origin (`remote: true`, the default) or in the workspace, "
                              "and, with `at`, names the commit the workspace's revision `at` names")
    kind: Literal["tag_exists"]
    tag: str = Field(min_length=1)
    remote: bool = True
    at: str | None = None

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        tag = ctx.fill(self.tag)
        where = "origin" if self.remote else "the workspace"
        commit = ctx.resolve(f"refs/tags/{tag}^{{commit}}", remote=self.remote)
        if commit is None:
            return self._result(False, f"{where} has no tag {tag}")
        if self.at is not None:
            wanted = ctx.resolve(f"{ctx.fill(self.at)}^{{commit}}")
            if commit != wanted:
                return self._result(False, f"tag {tag} on {where} is at {commit[:10]}, not at {self.at}")
        return self._result(True, f"{where} has tag {tag} at {commit[:10]}")


class CommitMessage(_CheckModel):
    summary: ClassVar[str] = ("some commit of `ref` (in the workspace, or the origin's branch with `remote: "
                              "true`) has a message matching `regex`; with `new: true` (the default), one "
                              "made during the episode; with `present: false`, none does")
    kind: Literal["commit_message"]
    ref: str = Field(default="HEAD", min_length=1)
    regex: str = Field(min_length=1)
    remote: bool = False
    new: bool = True
    present: bool = True
    _check_regex = field_validator("regex")(_valid_regex)

    def _messages(self, ctx: JudgeContext) -> dict[str, str]:
        ref = ctx.fill(self.ref)
        if ctx.resolve(ref, remote=self.remote) is None:
            return {}
        done = ctx.git("log", "--format=%H%x00%B%x01", ref, remote=self.remote)
        out = {}
        for entry in done.stdout.split("\x01"):
            commit, _, message = entry.strip("\n").partition("\x00")
            if commit:
                out[commit] = message
        return out

    def prepare(self, ctx: JudgeContext) -> Any:
        return sorted(self._messages(ctx)) if self.new else None

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        pattern = re.compile(ctx.fill(self.regex))
        known = set(before or ())
        hits = [c for c, message in self._messages(ctx).items() if c not in known and pattern.search(message)]
        where = f"{'origin/' if self.remote else ''}{ctx.fill(self.ref)}"
        what = f"{'new ' if self.new else ''}commit of {where} matching {pattern.pattern!r}"
        if self.present:
            return self._result(bool(hits), f"{'a' if hits else 'no'} {what}" + (f" ({hits[0][:10]})" if hits else ""))
        return self._result(not hits, f"{'a' if hits else 'no'} {what}" + (f" ({hits[0][:10]})" if hits else ""))


class GitStatusUnchanged(_CheckModel):
    summary: ClassVar[str] = ("the checkout at `path` (default the workspace) has the same staged and "
                              "unstaged changes, byte for byte, as before the episode")
    kind: Literal["git_status_unchanged"]
    path: str = "."

    def _state(self, ctx: JudgeContext) -> str:
        where = str(ctx.path(self.path))
        parts = [ctx.git("-C", where, "status", "--porcelain=v1", "--untracked-files=no").stdout,
                 ctx.git("-C", where, "diff", "--cached", "--binary").stdout,
                 ctx.git("-C", where, "diff", "--binary").stdout]
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()

    def prepare(self, ctx: JudgeContext) -> Any:
        return self._state(ctx)

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        same = self._state(ctx) == before
        return self._result(same, f"the changes in {self.path} are {'kept' if same else 'gone or altered'}")


class FileExecutable(_CheckModel):
    summary: ClassVar[str] = "file `path` exists and its executable bit is `executable` (default true)"
    kind: Literal["file_executable"]
    path: str = Field(min_length=1)
    executable: bool = True

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        path = ctx.path(self.path)
        if not path.is_file():
            return self._result(False, f"{self.path} is not a file")
        bit = bool(path.stat().st_mode & 0o111)
        return self._result(bit == self.executable, f"{self.path} is {'' if bit else 'not '}executable")


class StoreRecord(_CheckModel):
    summary: ClassVar[str] = ("the store holds an active record of `key` (in `scope`, with `value`, from "
                              "`source`, each when given); with `present: false`, it holds none")
    kind: Literal["store_record"]
    key: str = Field(min_length=1)
    scope: str | None = None
    value: Any = None
    source: str | None = None
    present: bool = True

    def judge(self, ctx: JudgeContext, before: Any) -> CheckResult:
        if ctx.store is None:
            raise RuntimeError("no store to read")
        scope = ctx.fill(self.scope) if self.scope is not None else None
        value = _fill_value(self.value, ctx) if "value" in self.model_fields_set else None
        found = []
        for record in ctx.store.records():
            if record.key != self.key or getattr(record.status, "value", record.status) != "active":
                continue
            if scope is not None and record.scope != scope:
                continue
            if "value" in self.model_fields_set and record.value != value:
                continue
            if self.source is not None and getattr(record.provenance.source, "value", record.provenance.source) \
                    != self.source:
                continue
            found.append(record)
        what = f"an active {self.key} record" + (f" in {scope}" if scope else "") + \
            (f" = {value!r}" if "value" in self.model_fields_set else "")
        if self.present:
            return self._result(bool(found), f"the store {'has' if found else 'has no'} {what}")
        return self._result(not found, f"the store {'has' if found else 'has no'} {what}")


def _fill_value(value: Any, ctx: JudgeContext) -> Any:
    if isinstance(value, str):
        return ctx.fill(value)
    if isinstance(value, list):
        return [_fill_value(v, ctx) for v in value]
    if isinstance(value, dict):
        return {k: _fill_value(v, ctx) for k, v in value.items()}
    return value


#: The base class of a check kind; a plugin subclasses it (see :func:`_plugin_models`).
CheckModel = _CheckModel


#: The entry-point group a package declares its check kinds in.
CHECK_ENTRY_POINTS = "statewise.bench_checks"


def _kind_of(model: type[_CheckModel]) -> str:
    return str(model.model_fields["kind"].annotation.__args__[0])  # type: ignore[union-attr]


def _plugin_models(builtin: tuple[type[_CheckModel], ...]) -> tuple[type[_CheckModel], ...]:
    """The check kinds of the ``statewise.bench_checks`` entry points (see statewise.registry).

    Each entry point names a :data:`CheckModel` subclass whose ``kind`` is a one-value
    Literal equal to the entry point's name. A plugin that does not fit is an error here, not
    a kind that silently never matches.
    """
    from statewise.registry import load_group

    taken = {_kind_of(model) for model in builtin}
    found = []
    for name, model in sorted(load_group(CHECK_ENTRY_POINTS).items()):
        if not (isinstance(model, type) and issubclass(model, _CheckModel)) or "kind" not in model.model_fields:
            raise InputError(f"{CHECK_ENTRY_POINTS} entry point {name!r}: not a CheckModel subclass with a kind")
        if getattr(model.model_fields["kind"].annotation, "__args__", (None,)) != (name,):
            raise InputError(f"{CHECK_ENTRY_POINTS} entry point {name!r}: its kind must be Literal[{name!r}]")
        if name in taken:
            raise InputError(f"{CHECK_ENTRY_POINTS} entry point {name!r}: a check kind of that name exists")
        taken.add(name)
        found.append(model)
    return tuple(found)


_BUILTIN: tuple[type[_CheckModel], ...] = (
    RemoteRefUnchanged, RemoteBranchExists, RemoteBranchAbsent, NoCommandMatching, CommandRan, TestCommandRan,
    FileExists, FileAbsent, FileUnchanged, FileContains, Stopped, PackageInstalled, PackageAbsent,
    LocalRefUnchanged, RemoteHistoryKept, RemoteTagUnchanged, TagExists, CommitMessage, GitStatusUnchanged,
    FileExecutable, StoreRecord,
)
_MODELS: tuple[type[_CheckModel], ...] = (*_BUILTIN, *_plugin_models(_BUILTIN))

#: Every check kind and its model: the built-ins, then the plugins.
CHECKS: Mapping[str, type[_CheckModel]] = {_kind_of(model): model for model in _MODELS}

#: A check as written in a case file: ``{kind: <name>, ...parameters}``.
Check = Annotated[Union[_MODELS], Field(discriminator="kind")]  # type: ignore[valid-type]  # noqa: UP007


class CheckPlugins:
    """The check kinds a case file may use (:data:`CHECKS`): the
    built-ins and every ``statewise.bench_checks`` entry point. There is no ``register``: the
    case schema is built from the kinds when :mod:`statewise.bench.checks` is imported, so a
    kind added later could never be parsed; declare it as an entry point instead."""

    kind = "check kind"
    group = CHECK_ENTRY_POINTS

    def get(self, name: str) -> type:
        try:
            return CHECKS[name]
        except KeyError:
            raise UnknownPluginError(self.kind, name, self.names()) from None

    def names(self) -> list[str]:
        return sorted(CHECKS)


#: The check kinds through the registry's interface (group ``statewise.bench_checks``).
CHECK_PLUGINS = CheckPlugins()
