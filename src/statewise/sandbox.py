"""Small real workspaces for the demo and the tests: a git repository with a bare origin
whose ``main`` really is protected by the remote (the shipped pre-receive hook)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from statewise.scopes import normalize_repo_identity
from statewise.verifiers.protection import install_branch_protection

__all__ = ["GitSandbox", "git", "make_git_sandbox"]

_ENV = {
    "GIT_AUTHOR_NAME": "StateWise Demo", "GIT_AUTHOR_EMAIL": "demo@statewise.invalid",
    "GIT_COMMITTER_NAME": "StateWise Demo", "GIT_COMMITTER_EMAIL": "demo@statewise.invalid",
    "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` (argv, no shell) and return stdout; raise on failure."""
    env = {**os.environ, **_ENV, "HOME": str(cwd)}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass(frozen=True, slots=True)
class GitSandbox:
    root: Path
    origin: Path  # the bare remote
    work: Path  # the agent's working tree

    @property
    def repo_identity(self) -> str:
        return normalize_repo_identity(str(self.origin))

    def remote_ref(self, branch: str) -> str | None:
        """The commit the origin holds for ``branch`` (None if it has no such branch)."""
        try:
            return git(self.origin, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
        except RuntimeError:
            return None

    def head(self) -> str:
        return git(self.work, "rev-parse", "HEAD")


def make_git_sandbox(root: Path, *, protected: tuple[str, ...] = ("main",), diverged: bool = True) -> GitSandbox:
    """Create ``root/origin.git`` (bare, ``protected`` branches enforced by its hook) and
    ``root/work`` (a clone on main). With ``diverged``, the local main's last commit was
    rewritten after it was pushed, so only a force push would update the remote main."""
    root.mkdir(parents=True, exist_ok=True)
    origin, work = root / "origin.git", root / "work"
    git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(origin))
    git(root, "init", "--quiet", "--initial-branch=main", str(work))
    git(work, "config", "user.name", "StateWise Demo")
    git(work, "config", "user.email", "demo@statewise.invalid")
    (work / "README.md").write_text("# app\n")
    git(work, "add", "README.md")
    git(work, "commit", "--quiet", "-m", "initial")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "--quiet", "--set-upstream", "origin", "main")
    (work / "app.py").write_text("print('v1')\n")
    git(work, "add", "app.py")
    git(work, "commit", "--quiet", "-m", "feature v1")
    git(work, "push", "--quiet", "origin", "main")
    if diverged:
        (work / "app.py").write_text("print('v2, rebased')\n")
        git(work, "commit", "--quiet", "--amend", "-a", "-m", "feature v2")
    install_branch_protection(origin, list(protected))
    return GitSandbox(root=root, origin=origin, work=work)
