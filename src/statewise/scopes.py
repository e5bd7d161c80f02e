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

# No `from __future__ import annotations`: the named tuples below get real types, because
# types given as text are compiled when the class is made, and a process's first compile()
# sets up Python's AST types, about a quarter of `python -c pass` (docs/performance-cli.md).
import enum
import os
import posixpath
import re
import urllib.parse
from functools import total_ordering
from typing import NamedTuple

from statewise.errors import ScopeError

__all__ = ["Scope", "ScopeLevel", "TaskScope", "encode_identity_part", "normalize_repo_identity"]

# Patterns are kept as text and compiled by re on first use (re caches them): compiling all of
# them at import was most of this module's import, and a start of the command line uses few.
_USER = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
# A normalized repository identity: host/owner/name, a path-derived id, or a bare name. Any
# other character is percent-encoded (see encode_identity_part), so '%' only starts an escape.
_REPO = r"^(?:[A-Za-z0-9._~+-]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9._~+/:-]|%[0-9A-Fa-f]{2})*$"
_ESCAPE = r"%[0-9A-Fa-f]{2}"
_BAD_BRANCH = r"(\.\.|[\s~^:?*\[\\]|@\{|//|/\.|\.lock$|/$|^/|^-|\.$)"


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


#: Hosts whose SSH and HTTPS remotes spell one repository differently, as data: an SSH
#: (or scp-like) identity matching ``pattern`` (ignoring case) is rewritten to the HTTPS identity ``to``.
#: Azure DevOps serves ``git@ssh.dev.azure.com:v3/org/project/repo`` and
#: ``https://dev.azure.com/org/project/_git/repo``; the older visualstudio.com hosts likewise.
_SSH_TO_HTTPS: tuple[tuple[str, str], ...] = (
    (r"^ssh\.dev\.azure\.com/v3/([^/]+)/([^/]+)/([^/]+)$", r"dev.azure.com/\1/\2/_git/\3"),
    (r"^vs-ssh\.visualstudio\.com/v3/([^/]+)/([^/]+)/([^/]+)$", r"dev.azure.com/\1/\2/_git/\3"),
    (r"^([a-z0-9-]+)\.visualstudio\.com/(?:defaultcollection/)?([^/]+)/_git/([^/]+)$",
     r"dev.azure.com/\1/\2/_git/\3"),
)

# Characters kept as they are in a repository identity; every other character (a space, '@',
# '%', ',', a non-ASCII letter, an undecodable byte) is percent-encoded as UTF-8, upper-case hex.
_IDENTITY_SAFE = "/:~+._-"
_URL = r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)"
_SCP = r"^(?:[^@/]+@)?(\[[^\]]+\]|[^:/\[]+):(.*)$"
_SCP_HOST = r"^\w[\w.-]*$"  # a host name or ssh alias (letters of any script)
_WINDOWS_DRIVE = r"^[A-Za-z]:[\\/]"


def encode_identity_part(text: str) -> str:
    """Percent-encode ``text`` the way a repository identity spells odd characters.

    Letters, digits and ``/ : ~ + . _ -`` stay; anything else becomes ``%XX`` (UTF-8, upper-case
    hex). Lone surrogates (bytes that were not UTF-8, decoded with ``surrogateescape``) are
    encoded as the original bytes, so an undecodable path still has one stable spelling.
    """
    return urllib.parse.quote(text, safe=_IDENTITY_SAFE, errors="surrogateescape")


def _decoded(text: str) -> str:
    """A URL path with its percent-escapes decoded (bytes that are not UTF-8 kept as surrogates)."""
    return urllib.parse.unquote(text, errors="surrogateescape")


def _local_identity(path: str, base: str | os.PathLike[str] | None) -> str:
    if not posixpath.isabs(path):
        # git resolves a relative remote against the repository it runs in: the worktree root.
        path = os.path.join(os.fspath(base) if base is not None else os.getcwd(), path)
    resolved = os.path.realpath(path)
    normalized = posixpath.normpath(resolved).strip("/")
    for suffix in ("/.git", ".git"):
        normalized = normalized.removesuffix(suffix)
    part = encode_identity_part(normalized.rstrip("/"))
    # The file system's root has no path part: "local/" would not read back as itself.
    return f"local/{part}" if part else "local"


def _hosted_identity(host: str, path: str) -> str:
    host = host.lower()
    path = posixpath.normpath("/" + _decoded(path)).strip("/") if path.strip("/") else ""
    path = path.removesuffix("/.git").removesuffix(".git").rstrip("/")
    identity = f"{host}/{path}" if path else host
    for pattern, replacement in _SSH_TO_HTTPS:
        match = re.match(pattern, identity, re.IGNORECASE)
        if match:
            identity = match.expand(replacement)
            break
    return "/".join(encode_identity_part(part) for part in identity.split("/"))


def normalize_repo_identity(url_or_id: str, *, base: str | os.PathLike[str] | None = None) -> str:
    """Turn a remote URL into a stable repository identity; see :func:`_normalize` for the forms."""
    if "\x00" in url_or_id:
        return ""  # no remote or path holds a NUL (git cannot store one); not a repository
    identity = _normalize(url_or_id, base)
    # Whatever the input, the result is a valid identity (or empty): it never starts with '/'
    # or ':' (a URL with no host), which a repo scope cannot hold.
    identity = identity.lstrip("/")
    return "%3A" + identity[1:] if identity.startswith(":") else identity


def _normalize(url_or_id: str, base: str | os.PathLike[str] | None) -> str:
    """Turn a remote URL into a stable repository identity (the ``<identity>`` of a repo scope).

    Every form git accepts for one repository gives one identity:

    * ``git@github.com:acme/app.git`` (scp-like), ``ssh://git@github.com:22/acme/app.git``,
      ``https://user:token@github.com:443/acme/app/`` all become ``github.com/acme/app``:
      user names, credentials, ports, a trailing ``/`` or ``.git``, query and fragment are
      dropped, and the host is lower-cased;
    * a local path, absolute or relative (resolved against ``base``, the repository's
      worktree root, as git does), or a ``file://`` URL, becomes ``local/<real path>`` with
      symlinks and ``..`` resolved and a trailing ``.git`` or ``/.git`` removed;
    * Azure DevOps SSH remotes are spelled as their HTTPS form
      (``dev.azure.com/<org>/<project>/_git/<repo>``).

    Percent-escapes in URLs are decoded, then every character outside letters, digits and
    ``/ : ~ + . _ -`` is percent-encoded (UTF-8, upper-case hex): a space is always ``%20``
    whether the remote spelled it ``%20`` or as a space, so a path with a space or
    ``My%20Project`` is a valid scope.
    """
    text = url_or_id.strip()
    url = re.match(_URL, text)
    if url:
        scheme, authority, path = url.groups()
        if scheme.lower() == "file":
            # file://localhost/p and file:///p name the same local path.
            return _local_identity(_decoded(path) or "/", base)
        host = authority.rpartition("@")[2]  # drop user[:password]@
        if host.startswith("["):
            host = host[: host.find("]") + 1]
        else:
            host = host.partition(":")[0]  # drop :port
            if host and not re.match(_SCP_HOST, host):
                return ""  # `ssh://~` names no host: no repository
        return _hosted_identity(host, path)
    if text.startswith("/") or text.startswith(".") or text.startswith("~") or re.match(_WINDOWS_DRIVE, text):
        return _local_identity(os.path.expanduser(text), base)
    scp = _scp_like(text)
    if scp:
        host, path = scp.groups()
        return _hosted_identity(host, path)
    if base is not None:
        return _local_identity(text, base)  # git reads anything else as a relative path
    # A bare name (an identity already, or a remote git resolves some other way).
    name = posixpath.normpath("/" + _decoded(text)).strip("/").removesuffix(".git") if text else ""
    identity = encode_identity_part(name)
    # A name that reads as scp-like once encoded (`0:%0A0`) keeps its first colon escaped, so
    # that the identity normalizes to itself.
    return identity.replace(":", "%3A", 1) if _scp_like(identity) else identity


def _scp_like(text: str) -> re.Match[str] | None:
    """git's scp-like form (``[user@]host:path``): a path after the colon, no ``/`` before it,
    and a host (or ssh alias) of letters, digits, ``.``, ``_`` and ``-`` not starting with a
    dot or dash, or an address in brackets; ``host:`` alone, ``%5B:0`` (what ``[:0`` becomes)
    or ``0@~:0`` is a name, so that every identity normalizes to itself."""
    scp = re.match(_SCP, text)
    if scp is None or not scp.group(2) or "/" in text.partition(":")[0]:
        return None
    host = scp.group(1)
    return scp if host.startswith("[") or re.match(_SCP_HOST, host) else None


def _check_branch(text: str, branch: str) -> None:
    if not branch or re.search(_BAD_BRANCH, branch):
        raise ScopeError(text, f"{branch!r} is not a valid branch name")


class Scope(NamedTuple):
    """The scope of one record. Build it with :meth:`parse` or the helpers below.

    A named tuple rather than a frozen dataclass: every start of the command line builds
    scopes, and defining a dataclass imports ``dataclasses`` (with ``inspect``), about a fifth
    of ``statewise record list``'s start-up (docs/performance-cli.md). Like every named tuple
    it equals a plain tuple of the same values: compare scopes only with scopes.
    """

    level: ScopeLevel
    name: str = ""  # user name, workspace path or repository identity
    branch: str = ""

    # --- construction -------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> "Scope":
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
            if not re.match(_USER, rest):
                raise ScopeError(text, "a user name is letters, digits, '.', '_' or '-'")
            return cls(ScopeLevel.USER, rest)
        if kind == "workspace":
            return cls.workspace(rest, _text=text)
        if kind == "repo":
            identity, at, branch = rest.partition("@")
            if not identity or not re.match(_REPO, identity) or ".." in identity.split("/"):
                raise ScopeError(
                    text, "a repository identity is like github.com/acme/app, with any character other "
                    "than letters, digits and / : ~ + . _ - percent-encoded (a space is %20)",
                )
            # One spelling per identity: escapes in upper-case hex (%2f and %2F are one byte).
            if "%" in identity:
                identity = re.sub(_ESCAPE, lambda m: m.group(0).upper(), identity)
            if at:
                _check_branch(text, branch)
                return cls(ScopeLevel.BRANCH, identity, branch)
            return cls(ScopeLevel.REPO, identity)
        raise ScopeError(text, f"unknown scope kind {kind!r}")

    @classmethod
    def workspace(cls, path: str, *, _text: str | None = None) -> "Scope":
        text = _text or f"workspace:{path}"
        if not path.startswith("/"):
            raise ScopeError(text, "a workspace path must be absolute")
        if "\x00" in path:
            raise ScopeError(text, "a workspace path cannot contain NUL")
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            # A name whose bytes are not UTF-8 (decoded with surrogateescape) cannot be stored.
            raise ScopeError(text.encode("utf-8", "backslashreplace").decode(),
                             "a workspace path must be UTF-8") from None
        parts = path.split("/")
        if ".." in parts:
            raise ScopeError(text, "a workspace path cannot contain '..'")
        return cls(ScopeLevel.WORKSPACE, posixpath.normpath(path).replace("//", "/"))

    @classmethod
    def repo(cls, identity: str, branch: str | None = None) -> "Scope":
        return cls.parse(f"repo:{identity}@{branch}" if branch else f"repo:{identity}")

    @classmethod
    def user(cls, name: str) -> "Scope":
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

    def contains(self, other: "Scope") -> bool:
        """True when every task in ``other`` is also in ``self`` (reflexive, transitive)."""
        if self.level is ScopeLevel.GLOBAL:
            return True
        if self.level is ScopeLevel.WORKSPACE and other.level is ScopeLevel.WORKSPACE:
            return _path_within(other.name, self.name)
        if self.level is ScopeLevel.REPO and other.level in (ScopeLevel.REPO, ScopeLevel.BRANCH):
            return self.name == other.name
        return self == other

    def applies_to(self, task: "TaskScope") -> bool:
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


class _TaskScopeFields(NamedTuple):
    user: str | None
    workspace: str | None
    repo: str | None
    branch: str | None


class TaskScope(_TaskScopeFields):
    """Where a task runs. Any part may be unknown (None); unknown parts match nothing.

    A named tuple (see :class:`Scope`) whose constructor validates every part; build a changed
    copy with the constructor, not ``_replace``, which would skip the checks.
    """

    __slots__ = ()

    def __new__(cls, user: str | None = None, workspace: str | None = None, repo: str | None = None,
                branch: str | None = None) -> "TaskScope":
        # Validate every part through the record-scope parser so both agree on syntax.
        if user is not None:
            Scope.user(user)
        if workspace is not None:
            workspace = Scope.workspace(workspace).name
        if repo is not None:
            Scope.repo(repo, branch)
        elif branch is not None:
            raise ScopeError(f"@{branch}", "a branch needs a repository")
        return super().__new__(cls, user, workspace, repo, branch)

    @classmethod
    def parse(cls, text: str) -> "TaskScope":
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
