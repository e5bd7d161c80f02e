"""Derive where a task runs (its TaskScope) from a working directory.

The repository identity comes from the ``origin`` remote (normalized, so SSH and HTTPS
URLs of one repository agree); a repository without remotes is identified by its path.
Every git call is an argv list with a timeout; a failure leaves that part unknown, which
makes fewer records apply, never more.
"""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path

from statewise.scopes import TaskScope, normalize_repo_identity

__all__ = ["derive_task_scope", "git_output"]


def git_output(cwd: str | Path, *args: str, timeout: float = 5.0) -> str | None:
    """The stripped stdout of ``git args...`` in ``cwd``, or None if it failed."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip()


def _current_user() -> str | None:
    try:
        name = os.environ.get("STATEWISE_USER") or getpass.getuser()
    except (KeyError, OSError):
        return None
    return name if name and name.replace(".", "").replace("_", "").replace("-", "").isalnum() else None


def derive_task_scope(cwd: str | Path, *, user: str | None = None) -> TaskScope:
    """The TaskScope of a task whose working directory is ``cwd``."""
    workspace = str(Path(cwd).resolve())
    repo = branch = None
    top = git_output(workspace, "rev-parse", "--show-toplevel")
    if top:
        origin = git_output(top, "remote", "get-url", "origin")
        repo = normalize_repo_identity(origin) if origin else normalize_repo_identity(top)
        head = git_output(top, "symbolic-ref", "--quiet", "--short", "HEAD")
        branch = head or None  # a detached HEAD has no branch
    return TaskScope(user=user or _current_user(), workspace=workspace, repo=repo, branch=branch)
