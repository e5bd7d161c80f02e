"""Derive where a task runs (its TaskScope) from a working directory.

The repository identity comes from the ``origin`` remote (normalized, so SSH and HTTPS
URLs of one repository agree, and a relative ``../origin.git`` is resolved against the
worktree root as git resolves it); a repository without remotes is identified by its path.
Every git call is an argv list with a timeout, and its output is read as bytes and decoded
with errors handled: a failure, an undecodable answer or one holding a NUL byte leaves that
part unknown, which makes fewer records apply, never more. Only a working directory that a
scope cannot hold (a NUL byte in it, or a name that is not UTF-8) is refused, with a
ScopeError saying so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from statewise.errors import ScopeError
from statewise.scopes import Scope, TaskScope, normalize_repo_identity

__all__ = ["derive_task_scope", "find_repository_root", "git_answers_kept", "git_listing", "git_output",
           "git_output_bytes"]

_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


#: The answers kept by :func:`git_answers_kept`, by (directory, arguments); None outside one.
_KEPT: ContextVar[dict[tuple[str, tuple[str, ...]], bytes | None] | None] = ContextVar("statewise_git_answers",
                                                                                     default=None)


@contextmanager
def git_answers_kept() -> Iterator[None]:
    """Within this block, :func:`git_output_bytes` asks git each question once per directory
    and gives the same answer after. For one decision (a hook call), whose reading of the
    workspace must not change halfway and which changes nothing in it: a push's check asked
    ``git rev-parse --show-toplevel`` three times from three places."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def git_output_bytes(cwd: str | Path, *args: str, timeout: float = 5.0) -> bytes | None:
    """The stdout of ``git args...`` in ``cwd`` as bytes (trailing newline removed), or None
    if git could not run, timed out or failed."""
    kept, key = _KEPT.get(), (os.fspath(cwd), args)
    if kept is not None and key in kept:
        return kept[key]
    try:
        answer = _run_git(key[0], args, timeout)
    except (OSError, ValueError):  # ValueError: a NUL in cwd or args
        answer = None
    if kept is not None:
        kept[key] = answer
    return answer


def _run_git(cwd: str, args: tuple[str, ...], timeout: float) -> bytes | None:
    """What ``subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=timeout,
    stdin=DEVNULL)`` reads, None on a failure or timeout, with ``os.posix_spawnp``: importing
    subprocess (signal, threading, selectors) costs more than half the interpreter's start-up,
    and ``statewise record list`` runs git three times (docs/performance-cli.md).

    ``git -C cwd`` is git's own "as if started in cwd"; an empty ``cwd``, which
    subprocess refuses, is refused here too (``-C ""`` would mean the current directory).
    The child's stdin and stderr are the null device; a child past ``timeout`` is killed.
    """
    if not cwd:
        return None
    import select  # a C module, a fraction of subprocess's import

    read_end, write_end = os.pipe()
    try:
        pid = os.posix_spawnp("git", ["git", "-C", cwd, *args], {**os.environ, **_GIT_ENV}, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, write_end, 1),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ])
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    chunks: list[bytes] = []
    finished = False
    try:
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(read_end, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(remaining * 1000):
                return None  # timed out: the child is killed below
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        status = os.waitpid(pid, 0)[1]
        finished = True
    finally:
        os.close(read_end)
        if not finished:  # a timeout or an interrupt: no child is left running or unreaped
            try:
                os.kill(pid, 9)  # SIGKILL, as subprocess.run kills a child past its timeout
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    return b"".join(chunks).rstrip(b"\r\n")


def git_output(cwd: str | Path, *args: str, timeout: float = 5.0) -> str | None:
    """The stripped stdout of ``git args...`` in ``cwd``, or None if it failed, was not UTF-8
    or held a NUL byte (git prints neither for the values StateWise asks about)."""
    raw = git_output_bytes(cwd, *args, timeout=timeout)
    if raw is None or b"\x00" in raw:
        return None
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None


def git_listing(cwd: str | Path, *args: str, timeout: float = 5.0) -> list[str] | None:
    """The NUL-separated entries git prints for a ``-z`` command (paths decoded as the file
    system encodes names), or None if git failed. :func:`git_output` refuses NUL bytes, which
    is right for a value and wrong for a listing."""
    raw = git_output_bytes(cwd, *args, timeout=timeout)
    if raw is None:
        return None
    return [os.fsdecode(item) for item in raw.split(b"\x00") if item]


def _git_path(cwd: str | Path, *args: str) -> str | None:
    """A path printed by git, decoded as the file system encodes names (bytes that are not
    UTF-8 survive as surrogates, so the path still opens)."""
    raw = git_output_bytes(cwd, *args)
    if not raw or b"\x00" in raw:
        return None
    return os.fsdecode(raw.strip(b"\r\n"))


def find_repository_root(cwd: str | Path) -> Path | None:
    """The root of the git worktree containing ``cwd``, or None outside git.

    Asks ``git rev-parse --show-toplevel``; when git cannot answer (not installed, timed out,
    refused the directory as unsafe, a damaged ``.git``), walks up from ``cwd`` to the nearest
    directory holding a ``.git`` entry, which is how git finds the worktree itself.
    """
    top = _git_path(cwd, "rev-parse", "--show-toplevel")
    if top:
        return Path(top)
    try:
        here = Path(cwd).resolve()
    except (OSError, ValueError):
        return None
    for directory in (here, *here.parents):
        try:
            if (directory / ".git").exists():
                return directory
        except OSError:
            continue
    return None


def _login_name() -> str:
    """What ``getpass.getuser()`` answers on POSIX: the first of the variables it reads, else
    the password database's name for this user id (KeyError when it has none), without
    importing getpass (termios and more, for a prompt StateWise never shows)."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        user = os.environ.get(name)
        if user:
            return user
    import pwd

    return pwd.getpwuid(os.getuid())[0]


def _current_user() -> str | None:
    try:
        name = os.environ.get("STATEWISE_USER") or _login_name()
    except (KeyError, OSError):
        return None
    return name if name and name.replace(".", "").replace("_", "").replace("-", "").isalnum() else None


def _repo_identity(top: str) -> str | None:
    raw = git_output_bytes(top, "remote", "get-url", "origin")
    if raw is not None and b"\x00" not in raw and raw.strip():
        # A remote URL with bytes that are not UTF-8 keeps them: they are percent-encoded.
        origin = raw.strip().decode("utf-8", errors="surrogateescape")
        identity = normalize_repo_identity(origin, base=top)
    elif raw is not None and raw.strip():
        return None  # a NUL in the URL: no identity we could trust
    else:
        identity = normalize_repo_identity(top)
    try:
        return Scope.repo(identity).name
    except ScopeError:
        return None


def _branch(top: str) -> str | None:
    head = git_output(top, "symbolic-ref", "--quiet", "--short", "HEAD")
    return head or None  # a detached HEAD (or an undecodable name) has no branch


def derive_task_scope(cwd: str | Path, *, user: str | None = None) -> TaskScope:
    """The TaskScope of a task whose working directory is ``cwd``.

    Raises ScopeError only when ``cwd`` holds a NUL byte (it names no directory) or its name is
    not UTF-8 (no store can hold it); every git failure leaves the repository or branch
    unknown instead.
    """
    if "\x00" in os.fspath(cwd):
        raise ScopeError(repr(os.fspath(cwd)), "the working directory contains a NUL byte")
    workspace = str(Path(cwd).resolve())
    repo = branch = None
    top = _git_path(workspace, "rev-parse", "--show-toplevel")
    if top:
        repo = _repo_identity(top)
        if repo is not None:
            branch = _branch(top)
            if branch is not None:
                try:
                    Scope.repo(repo, branch)
                except ScopeError:
                    branch = None  # a name git accepts but a scope cannot hold: unknown
    return TaskScope(user=user or _current_user(), workspace=workspace, repo=repo, branch=branch)
