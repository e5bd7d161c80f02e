"""Scopes: where a record applies, and where a task runs.

A record has exactly one scope, at one of five levels, written as a string:

==============================  =======================================================
``global``                      everywhere
``user:<name>``                 every task of that user
``workspace:<absolute path>``   every task whose working directory is at or below the path
``repo:<identity>``             every task in that repository (any checkout, any branch)
``repo:<identity>@<branch>``    every task in that repository on that branch
==============================  =======================================================

A task runs in a :class:`TaskScope` (user, workspace, repository, branch; each may be
unknown). A record applies to a task when its scope contains the task's scope. Levels are
ordered from general to specific (global, user, workspace, repo, branch); when records for
one key apply at several levels, the most specific wins and the others are *shadowed*.
"""

from __future__ import annotations

import enum
import posixpath
import re
from dataclasses import dataclass
from functools import total_ordering

from statewise.errors import ScopeError

__all__ = ["Scope", "ScopeLevel", "TaskScope", "normalize_repo_identity"]

_USER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# A normalized repository identity: host/owner/name, a path-derived id, or a bare name.
_REPO = re.compile(r"^[A-Za-z0-9._~+-][A-Za-z0-9._~+/:-]*$")
_BAD_BRANCH = re.compile(r"(\.\.|[\s~^:?*\[\\]|@\{|//|/\.|\.lock$|/$|^/|^-|\.$)")


@total_ordering
class ScopeLevel(enum.Enum):
    """Scope levels, from the most general to the most specific."""

    GLOBAL = 0
    USER = 1
    WORKSPACE = 2
    REPO = 3
    BRANCH = 4

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ScopeLevel):
            return NotImplemented
        return self.value < other.value

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> ScopeLevel:
        try:
            return cls[label.upper()]
        except KeyError:
            names = ", ".join(level.label for level in cls)
            raise ValueError(f"unknown scope level {label!r}; expected one of {names}") from None


def normalize_repo_identity(url_or_id: str) -> str:
    """Turn a remote URL into a stable repository identity.

    ``git@github.com:acme/app.git``, ``https://github.com/acme/app`` and
    ``ssh://git@github.com/acme/app.git`` all become ``github.com/acme/app``. Local paths and
    ``file://`` URLs become ``local/<path without leading slash>``.
    """
    text = url_or_id.strip()
    if text.startswith("file://"):
        text = text[len("file://") :]
    if text.startswith("/"):
        normalized = posixpath.normpath(text).lstrip("/")
        if normalized.endswith(".git"):
            normalized = normalized[: -len(".git")]
        return "local/" + normalized
    match = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?/(.*)$", text)
    if match:
        host, path = match.groups()
    else:
        scp = re.match(r"^(?:[^@/]+@)?([^:/]+):(.*)$", text)
        if not scp:
            return text.rstrip("/").removesuffix(".git")
        host, path = scp.groups()
    path = path.strip("/").removesuffix(".git")
    return f"{host.lower()}/{path}"


def _check_branch(text: str, branch: str) -> None:
    if not branch or _BAD_BRANCH.search(branch):
        raise ScopeError(text, f"{branch!r} is not a valid branch name")


@dataclass(frozen=True, slots=True)
class Scope:
    """The scope of one record. Build it with :meth:`parse` or the helpers below."""

    level: ScopeLevel
    name: str = ""  # user name, workspace path or repository identity
    branch: str = ""

    # --- construction -------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Scope:
        """Parse a scope string; raise ScopeError naming the accepted forms if it is bad."""
        if not isinstance(text, str):
            raise ScopeError(repr(text), "a scope must be a string")
        raw = text.strip()
        if raw == "global":
            return GLOBAL
        kind, sep, rest = raw.partition(":")
        if not sep:
            raise ScopeError(text, "missing '<kind>:' prefix")
        if not rest:
            raise ScopeError(text, f"nothing after '{kind}:'")
        if kind == "user":
            if not _USER.match(rest):
                raise ScopeError(text, "a user name is letters, digits, '.', '_' or '-'")
            return cls(ScopeLevel.USER, rest)
        if kind == "workspace":
            return cls.workspace(rest, _text=text)
        if kind == "repo":
            identity, at, branch = rest.partition("@")
            if not identity or not _REPO.match(identity) or ".." in identity.split("/"):
                raise ScopeError(text, "a repository identity is like github.com/acme/app")
            if at:
                _check_branch(text, branch)
                return cls(ScopeLevel.BRANCH, identity, branch)
            return cls(ScopeLevel.REPO, identity)
        raise ScopeError(text, f"unknown scope kind {kind!r}")

    @classmethod
    def workspace(cls, path: str, *, _text: str | None = None) -> Scope:
        text = _text or f"workspace:{path}"
        if not path.startswith("/"):
            raise ScopeError(text, "a workspace path must be absolute")
        if "\x00" in path:
            raise ScopeError(text, "a workspace path cannot contain NUL")
        parts = path.split("/")
        if ".." in parts:
            raise ScopeError(text, "a workspace path cannot contain '..'")
        return cls(ScopeLevel.WORKSPACE, posixpath.normpath(path).replace("//", "/"))

    @classmethod
    def repo(cls, identity: str, branch: str | None = None) -> Scope:
        return cls.parse(f"repo:{identity}@{branch}" if branch else f"repo:{identity}")

    @classmethod
    def user(cls, name: str) -> Scope:
        return cls.parse(f"user:{name}")

    # --- rendering ----------------------------------------------------------------

    def __str__(self) -> str:
        match self.level:
            case ScopeLevel.GLOBAL:
                return "global"
            case ScopeLevel.USER:
                return f"user:{self.name}"
            case ScopeLevel.WORKSPACE:
                return f"workspace:{self.name}"
            case ScopeLevel.REPO:
                return f"repo:{self.name}"
            case ScopeLevel.BRANCH:
                return f"repo:{self.name}@{self.branch}"
        raise AssertionError(self.level)  # pragma: no cover

    # --- algebra ------------------------------------------------------------------

    def contains(self, other: Scope) -> bool:
        """True when every task in ``other`` is also in ``self`` (reflexive, transitive)."""
        if self.level is ScopeLevel.GLOBAL:
            return True
        if self.level is ScopeLevel.WORKSPACE and other.level is ScopeLevel.WORKSPACE:
            return _path_within(other.name, self.name)
        if self.level is ScopeLevel.REPO and other.level in (ScopeLevel.REPO, ScopeLevel.BRANCH):
            return self.name == other.name
        return self == other

    def applies_to(self, task: TaskScope) -> bool:
        """True when a record with this scope applies to a task running in ``task``."""
        match self.level:
            case ScopeLevel.GLOBAL:
                return True
            case ScopeLevel.USER:
                return task.user == self.name
            case ScopeLevel.WORKSPACE:
                return task.workspace is not None and _path_within(task.workspace, self.name)
            case ScopeLevel.REPO:
                return task.repo == self.name
            case ScopeLevel.BRANCH:
                return task.repo == self.name and task.branch == self.branch
        raise AssertionError(self.level)  # pragma: no cover

    @property
    def specificity(self) -> tuple[int, int]:
        """Sort key: higher is more specific. Deeper workspace paths are more specific."""
        depth = self.name.count("/") if self.level is ScopeLevel.WORKSPACE else 0
        return (self.level.value, depth)


GLOBAL = Scope(ScopeLevel.GLOBAL)


def _path_within(path: str, ancestor: str) -> bool:
    return ancestor == "/" or path == ancestor or path.startswith(ancestor + "/")


@dataclass(frozen=True, slots=True)
class TaskScope:
    """Where a task runs. Any part may be unknown (None); unknown parts match nothing."""

    user: str | None = None
    workspace: str | None = None
    repo: str | None = None
    branch: str | None = None

    def __post_init__(self) -> None:
        # Validate every part through the record-scope parser so both agree on syntax.
        if self.user is not None:
            Scope.user(self.user)
        if self.workspace is not None:
            object.__setattr__(self, "workspace", Scope.workspace(self.workspace).name)
        if self.repo is not None:
            Scope.repo(self.repo, self.branch)
        elif self.branch is not None:
            raise ScopeError(f"@{self.branch}", "a branch needs a repository")

    @classmethod
    def parse(cls, text: str) -> TaskScope:
        """Parse ``user:alice,workspace:/src/app,repo:github.com/acme/app@main``.

        Each part is a record scope; ``global`` may appear and adds nothing.
        """
        parts: dict[str, str | None] = {}
        for piece in filter(None, (p.strip() for p in text.split(","))):
            scope = Scope.parse(piece)
            if scope.level is ScopeLevel.GLOBAL:
                continue
            slot = {
                ScopeLevel.USER: "user",
                ScopeLevel.WORKSPACE: "workspace",
                ScopeLevel.REPO: "repo",
                ScopeLevel.BRANCH: "repo",
            }[scope.level]
            if slot in parts:
                raise ScopeError(text, f"{slot} is given twice")
            parts[slot] = scope.name
            if scope.level is ScopeLevel.BRANCH:
                parts["branch"] = scope.branch
        return cls(**parts)

    def __str__(self) -> str:
        parts = [
            self.most_specific_at(level)
            for level in (ScopeLevel.USER, ScopeLevel.WORKSPACE, ScopeLevel.BRANCH)
        ]
        if self.repo and not self.branch:
            parts.append(Scope(ScopeLevel.REPO, self.repo))
        return ",".join(str(p) for p in parts if p is not None) or "global"

    def most_specific_at(self, level: ScopeLevel) -> Scope | None:
        """The task's own scope at ``level`` (for a workspace, the working directory itself)."""
        if level is ScopeLevel.GLOBAL:
            return GLOBAL
        if level is ScopeLevel.USER:
            return Scope(level, self.user) if self.user else None
        if level is ScopeLevel.WORKSPACE:
            return Scope(level, self.workspace) if self.workspace else None
        if level is ScopeLevel.REPO:
            return Scope(level, self.repo) if self.repo else None
        if self.repo and self.branch:
            return Scope(level, self.repo, self.branch)
        return None

    @property
    def most_specific(self) -> Scope:
        """The narrowest scope this task determines."""
        for level in sorted(ScopeLevel, reverse=True):
            scope = self.most_specific_at(level)
            if scope is not None:
                return scope
        return GLOBAL

    def applicable_scopes(self) -> list[Scope]:
        """Every record scope that applies to this task, most specific first.

        This is a short list (a handful plus one per workspace ancestor), which is what lets
        the store answer a retrieval with one indexed ``scope IN (...)`` lookup.
        """
        scopes: list[Scope] = []
        if self.repo and self.branch:
            scopes.append(Scope(ScopeLevel.BRANCH, self.repo, self.branch))
        if self.repo:
            scopes.append(Scope(ScopeLevel.REPO, self.repo))
        if self.workspace:
            path = self.workspace
            while True:
                scopes.append(Scope(ScopeLevel.WORKSPACE, path))
                if path == "/":
                    break
                path = posixpath.dirname(path)
        if self.user:
            scopes.append(Scope(ScopeLevel.USER, self.user))
        scopes.append(GLOBAL)
        return scopes
