"""Branch protection a local (bare) origin enforces: its configuration and its server hooks.

A remote on this machine is protected by what git itself runs when a push arrives: the
``receive.denyNonFastForwards``/``receive.denyDeletes`` settings and the server hooks
(``pre-receive``, ``update``, ``reference-transaction``) that declare the patterns they
protect. :func:`read_local_protection` reads both, read-only; :mod:`.protection` uses it for
local remotes and asks a hosting API for the others.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from statewise.errors import StateWiseError
from statewise.verifiers.base import (
    Deadline,
    Observation,
    run_command,
)

#: The git configuration key a StateWise-installed hook reads its protected patterns from.
CONFIG_KEY = "statewise.protectedBranch"
#: The line by which any server hook declares the branch globs it protects.
DECLARATION = "statewise-protects:"
# The hooks through which git's receive-pack can refuse a push.
_REFUSING_HOOKS = ("pre-receive", "update", "reference-transaction", "proc-receive")
_MAX_HOOK_BYTES = 1024 * 1024


def git_dir_of(path: Path) -> Path | None:
    """The git directory of a repository at ``path`` (bare, or with a ``.git``), as git finds it."""
    for candidate in (path, Path(str(path) + ".git")):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else candidate / target
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir() and (candidate / "refs").is_dir():
            return candidate
    return None


# --- local protection ------------------------------------------------------------------------


def _config_bool(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0", ""):
        return False
    return None


# section[.subsection].key: section and key are alphanumeric (and '-'); the subsection is
# anything but a newline or NUL. git prints section and key in lower case.
_CONFIG_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*(?:\.[^\n\x00]*)?\.[a-z][a-z0-9-]*$")


class ConfigGarbage(StateWiseError, ValueError):
    """Output of ``git config --null --list`` that is not a configuration listing."""


def parse_config_list(raw: bytes) -> list[tuple[str, str | None]]:
    """Parse ``git config --null --list`` output strictly: ``(name, value)`` pairs in order.

    Each entry is ``name\\nvalue\\0`` (or ``name\\0`` for a key without ``=``, value None).
    Raises :class:`ConfigGarbage` for anything else -- empty output (every repository's
    configuration names at least ``core.repositoryformatversion``), a missing final NUL, a
    name that is not a configuration key, or bytes that are not UTF-8 -- because a listing
    that cannot be read says nothing, least of all "no protection configured"."""
    if not raw:
        raise ConfigGarbage("the configuration listing is empty")
    if not raw.endswith(b"\x00"):
        raise ConfigGarbage("the configuration listing does not end with a NUL")
    entries: list[tuple[str, str | None]] = []
    for number, chunk in enumerate(raw[:-1].split(b"\x00"), start=1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigGarbage(f"entry {number} is not UTF-8 text") from None
        name, newline, value = text.partition("\n")
        if not _CONFIG_NAME.match(name):
            raise ConfigGarbage(f"entry {number} does not start with a configuration key: {name[:60]!r}")
        entries.append((name, value if newline else None))
    return entries


@dataclass(frozen=True)
class ServerHook:
    """One executable hook of a local remote through which git can refuse a push.

    ``kind``: ``statewise`` (it reads ``statewise.protectedBranch``), ``declared`` (it says
    what it protects with a ``statewise-protects:`` line) or ``foreign`` (nothing is known
    about what it refuses)."""

    path: Path
    kind: str
    declared: tuple[str, ...] = ()
    note: str = ""


def _declared_patterns(text: str) -> tuple[str, ...] | None:
    """The globs of a ``statewise-protects:`` line (``none``: none), or None without one."""
    for line in text.splitlines():
        at = line.find(DECLARATION)
        if at < 0:
            continue
        words = line[at + len(DECLARATION) :].split()
        return tuple(word for word in words if word.lower() != "none")
    return None


def _classify_hook(candidate: Path) -> ServerHook | str | None:
    """A hook git would run, a note on why it would not run (str), or None if absent."""
    try:
        info = candidate.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        return ServerHook(candidate, "foreign", note=f"cannot look at it: {error.strerror or error}")
    if stat.S_ISREG(info.st_mode) and not os.access(candidate, os.X_OK):
        return f"{candidate} is not executable, so git does not run it"
    if not stat.S_ISREG(info.st_mode):
        return ServerHook(candidate, "foreign", note="not a regular file")
    try:
        with open(candidate, "rb") as handle:
            data = handle.read(_MAX_HOOK_BYTES + 1)
    except OSError as error:
        return ServerHook(candidate, "foreign", note=f"cannot read it: {error.strerror or error}")
    if len(data) > _MAX_HOOK_BYTES:
        return ServerHook(candidate, "foreign", note="too large to read")
    text = data.decode("utf-8", errors="replace")
    declared = _declared_patterns(text)
    if declared is not None:
        return ServerHook(candidate, "declared", declared=declared)
    if CONFIG_KEY.lower() in text.lower():
        return ServerHook(candidate, "statewise")
    return ServerHook(candidate, "foreign")


@dataclass(frozen=True)
class LocalProtection:
    """What a local remote repository enforces, as far as can be seen."""

    git_dir: Path
    patterns: tuple[str, ...]  # statewise.protectedBranch values
    hooks: tuple[ServerHook, ...]
    notes: tuple[str, ...]
    deny_non_fast_forwards: bool | None
    deny_deletes: bool | None
    hooks_dir: Path | None = None
    reference: str = ""

    @property
    def enforcer(self) -> ServerHook | None:
        """The hook that enforces ``statewise.protectedBranch``, if any."""
        return next((hook for hook in self.hooks if hook.kind == "statewise"), None)

    @property
    def hook(self) -> Path | None:
        enforcer = self.enforcer
        return enforcer.path if enforcer is not None else None

    @property
    def enforced(self) -> bool:
        return self.enforcer is not None

    @property
    def foreign(self) -> tuple[ServerHook, ...]:
        return tuple(hook for hook in self.hooks if hook.kind == "foreign")

    def enforced_patterns(self) -> list[str]:
        """Every glob some hook enforces: the configured ones (if a hook reads them) and declared ones."""
        found = list(self.patterns) if self.enforced else []
        for hook in self.hooks:
            if hook.kind == "declared":
                found.extend(p for p in hook.declared if p not in found)
        return found

    def matching(self, branch: str) -> list[str]:
        return [pattern for pattern in self.patterns if fnmatch.fnmatchcase(branch, pattern)]

    def protecting(self, branch: str) -> tuple[ServerHook, list[str]] | None:
        """The hook that refuses updates of ``branch`` and the globs that match, or None."""
        if self.enforcer is not None and self.matching(branch):
            return self.enforcer, self.matching(branch)
        for hook in self.hooks:
            if hook.kind == "declared":
                matched = [p for p in hook.declared if fnmatch.fnmatchcase(branch, p)]
                if matched:
                    return hook, matched
        return None

    def settings(self) -> str:
        def show(value: bool | None) -> str:
            return "unset" if value is None else str(value).lower()

        return (
            f"receive.denyNonFastForwards={show(self.deny_non_fast_forwards)}, "
            f"receive.denyDeletes={show(self.deny_deletes)}"
        )

    def unknown_because(self) -> str:
        """Why protection cannot be known (foreign hooks), for an UNAVAILABLE detail."""
        shown = ", ".join(f"{h.path}{f' ({h.note})' if h.note else ''}" for h in self.foreign)
        return (
            f"a server hook exists ({shown}); protection not known: it may refuse any push. "
            f"Add a line '# {DECLARATION} <branch globs>' (or 'none') to the hook to declare what it protects"
        )

    def enforcement(self) -> str:
        if self.enforcer is not None:
            return f"enforced by {self.enforcer.path}"
        notes = list(self.notes) or [f"no pre-receive or update hook in {self.hooks_dir}"]
        text = "; ".join(notes)
        return f"{CONFIG_KEY} is set but nothing enforces it ({text})" if self.patterns else text


def read_local_protection(
    remote_path: Path, *, env: Mapping[str, str], deadline: Deadline
) -> LocalProtection | Observation:
    """Read the protection a repository at ``remote_path`` enforces, or UNAVAILABLE."""
    git_dir = git_dir_of(remote_path)
    if git_dir is None:
        return Observation.unavailable(f"the remote {remote_path} is not a git repository (or does not exist)")
    result = run_command(
        ["git", f"--git-dir={git_dir}", "config", "--null", "--list"],
        cwd=git_dir,
        timeout=deadline.remaining(),
        env=env,
    )
    if not result.ok:
        return Observation.unavailable(
            f"cannot read the configuration of {git_dir}: {result.describe_failure()}", result.reference
        )
    try:
        entries = parse_config_list(result.raw_stdout)
    except ConfigGarbage as garbage:
        return Observation.unavailable(
            f"cannot read the configuration of {git_dir}: {garbage}; git printed something that is not a "
            "configuration listing, so nothing is known about its protection",
            result.reference,
        )
    patterns: list[str] = []
    single: dict[str, str | None] = {}
    for name, value in entries:
        if name == CONFIG_KEY.lower():
            if value is not None and value.strip():
                patterns.append(value.strip())
        else:
            single[name] = value
    hooks_path = single.get("core.hookspath")
    if hooks_path:
        hooks_dir = Path(os.path.expanduser(hooks_path))
        if not hooks_dir.is_absolute():
            hooks_dir = git_dir / hooks_dir  # receive-pack runs hooks in the git directory
    else:
        hooks_dir = git_dir / "hooks"
    hooks: list[ServerHook] = []
    notes: list[str] = []
    for hook_name in _REFUSING_HOOKS:
        if hook_name == "proc-receive" and not single.get("receive.procreceiverefs"):
            continue  # git runs proc-receive only for the refs receive.procReceiveRefs names
        found = _classify_hook(hooks_dir / hook_name)
        if isinstance(found, ServerHook):
            hooks.append(found)
        elif isinstance(found, str):
            notes.append(found)
    return LocalProtection(
        git_dir=git_dir,
        patterns=tuple(patterns),
        hooks=tuple(hooks),
        notes=tuple(notes),
        deny_non_fast_forwards=_config_bool(single.get("receive.denynonfastforwards")),
        deny_deletes=_config_bool(single.get("receive.denydeletes")),
        hooks_dir=hooks_dir,
        reference=result.reference,
    )
