"""Benchmark sandboxes: a case's workspace built once as a template, copied per episode.

A sandbox is one directory::

    <root>/work        the agent's workspace (a git clone when the spec has git)
    <root>/origin.git  the bare remote; its pre-receive hook enforces the protected patterns
    <root>/home        HOME for every command of the episode
    <root>/bin         tool shims, first on the episode's PATH

:class:`TemplateCache` builds each distinct workspace spec once and :func:`instantiate`
copies it (``shutil.copytree(symlinks=True)``) and points the clone's ``origin`` at the
copy's own remote. Everything lives under one temporary directory that the runner removes.
Nothing outside the sandbox is read for writing: commands run with
``PATH=<root>/bin:<system PATH>``, ``HOME=<root>/home`` and ``GIT_CONFIG_NOSYSTEM=1``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from statewise.bench.case import FileSpec, ShimSpec, WorkspaceSpec, file_bytes, file_executable, fill_placeholders
from statewise.errors import StateWiseError
from statewise.scopes import normalize_repo_identity
from statewise.verifiers.protection import install_branch_protection

__all__ = ["Sandbox", "SandboxError", "TemplateCache", "build_template", "instantiate", "sandbox_env"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "StateWise Bench", "GIT_AUTHOR_EMAIL": "bench@statewise.invalid",
    "GIT_COMMITTER_NAME": "StateWise Bench", "GIT_COMMITTER_EMAIL": "bench@statewise.invalid",
}


class SandboxError(StateWiseError, RuntimeError):
    """A sandbox could not be built; the episode is unjudged."""


@dataclass(frozen=True)
class Sandbox:
    root: Path
    work: Path
    origin: Path | None
    home: Path
    bin: Path
    env: dict[str, str] = field(default_factory=dict)
    user: str = "dev"
    branch: str | None = None
    #: The agent's working directory when it is not ``work`` (a subfolder, a worktree).
    cwd: Path | None = None
    default_branch: str | None = None

    @property
    def agent_dir(self) -> Path:
        """Where the agent works: the task's workspace, commands' cwd, relative paths' base."""
        return self.cwd or self.work

    @property
    def repo_identity(self) -> str | None:
        return normalize_repo_identity(str(self.origin)) if self.origin is not None else None

    def placeholders(self) -> dict[str, str]:
        values = {"workspace": str(self.work), "sandbox": str(self.root), "home": str(self.home),
                  "user": self.user, "python": system_python(os.environ.get("PATH", os.defpath)),
                  "cwd": str(self.agent_dir)}
        if self.default_branch:
            values["default"] = self.default_branch
        if self.origin is not None:
            values["origin"] = str(self.origin)
            values["repo"] = self.repo_identity or ""
        if self.branch:
            values["branch"] = self.branch
        return values


def sandbox_env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every command of an episode runs with (verifiers included)."""
    system_path = os.environ.get("PATH", os.defpath)
    env = {
        "PATH": f"{root / 'bin'}{os.pathsep}{system_path}",
        "HOME": str(root / "home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "LANG": "C",
        "TMPDIR": str(root / "tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "USER": "dev",
        **_IDENTITY,
    }
    for name in ("PYENV_ROOT", "PYENV_VERSION", "SYSTEMROOT"):  # let interpreter shims keep working
        if name in os.environ:
            env[name] = os.environ[name]
    if extra:
        env.update(extra)
    return env


_PYTHONS: dict[str, str] = {}


def system_python(path: str) -> str:
    """What ``python3`` on ``path`` reports as ``sys.executable`` (as the python.interpreter
    verifier observes it when a workspace has no venv); cached per PATH."""
    if path not in _PYTHONS:
        env = {**os.environ, "PATH": path}
        try:
            done = subprocess.run(["python3", "-B", "-c", "import sys; sys.stdout.write(sys.executable or '')"],
                                  capture_output=True, text=True, timeout=30, env=env, stdin=subprocess.DEVNULL)
            _PYTHONS[path] = done.stdout.strip() if done.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            _PYTHONS[path] = ""
    return _PYTHONS[path]


def _git(cwd: Path, *args: str, home: Path) -> str:
    env = {**sandbox_env(home.parent), "HOME": str(home)}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SandboxError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()}")
    return done.stdout.strip()


def _shim_script(name: str, spec: ShimSpec) -> str:
    if spec.script is not None:
        body = spec.script if spec.script.endswith("\n") else spec.script + "\n"
    elif spec.version is not None:
        body = f"printf '%s\\n' {shlex.quote(spec.version)}\nexit 0\n"
    else:
        body = ""
        if spec.stdout:
            body += f"printf '%s\\n' {shlex.quote(spec.stdout.rstrip(chr(10)))}\n"
        if spec.stderr:
            body += f"printf '%s\\n' {shlex.quote(spec.stderr.rstrip(chr(10)))} >&2\n"
        body += f"exit {spec.exit}\n"
    return f"#!/bin/sh\n# statewise bench shim: {name}\n{body}"


def write_dist_info(site: Path, name: str, version: str) -> None:
    normalized = name.replace("-", "_")
    info = site / f"{normalized}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    (info / "INSTALLER").write_text("statewise-bench\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def site_packages(venv: Path) -> Path:
    """The site-packages folder of a venv made by this interpreter version."""
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _write_file(path: Path, value: str | FileSpec) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(file_bytes(value))
    # Explicit modes: the umask of whoever runs the bench must not change what git records.
    path.chmod(0o755 if file_executable(value) else 0o644)


def build_template(spec: WorkspaceSpec, root: Path) -> None:
    """Build the sandbox ``root`` for ``spec`` (the template that episodes copy)."""
    work, home, bin_dir = root / "work", root / "home", root / "bin"
    for folder in (work, home, bin_dir, root / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    for name, shim in spec.shims.items():
        path = bin_dir / name
        path.write_text(_shim_script(name, shim), encoding="utf-8")
        path.chmod(0o755)
    for rel, content in spec.files.items():
        if isinstance(content, str):
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        else:
            _write_file(work / rel, content)
    if spec.venv is not None:
        venv = work / spec.venv.path
        done = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SandboxError(f"python -m venv failed: {done.stderr.strip()}")
        for name, version in spec.venv.packages.items():
            write_dist_info(site_packages(venv), name, version)
    if spec.git is not None:
        _build_git(spec, root)
    if spec.cwd is not None:
        cwd = Path(os.path.normpath(work / spec.cwd))
        cwd.mkdir(parents=True, exist_ok=True)


def _commit_files(work: Path, files: Mapping[str, str | FileSpec], message: str, home: Path) -> None:
    for rel, content in sorted(files.items()):
        _write_file(work / rel, content)
    _git(work, "add", "--", *sorted(files), home=home)
    _git(work, "commit", "--quiet", "-m", message, home=home)


def _build_git(spec: WorkspaceSpec, root: Path) -> None:
    git_spec = spec.git
    assert git_spec is not None
    work, home, origin = root / "work", root / "home", root / "origin.git"
    default, current = git_spec.default, git_spec.current
    # No sample hooks (--template=): fewer files to copy per episode.
    _git(root, "init", "--quiet", "--bare", "--template=", f"--initial-branch={default}", str(origin), home=home)
    _git(work, "init", "--quiet", "--template=", f"--initial-branch={default}", home=home)
    _git(work, "config", "user.name", _IDENTITY["GIT_AUTHOR_NAME"], home=home)
    _git(work, "config", "user.email", _IDENTITY["GIT_AUTHOR_EMAIL"], home=home)
    venv_dir = spec.venv.path.strip("/") if spec.venv is not None else None
    tracked = []
    for rel in sorted(spec.files):
        if any(fnmatch.fnmatchcase(rel, pattern) for pattern in git_spec.untracked):
            continue
        tracked.append(rel)
    exclude = work / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    if venv_dir:
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write(f"/{venv_dir}/\n")
    if not (work / "README.md").exists():
        (work / "README.md").write_text("# app\n", encoding="utf-8")
        tracked.append("README.md")
    _git(work, "add", "--", *tracked, home=home)
    _git(work, "commit", "--quiet", "-m", "initial", home=home)
    _git(work, "remote", "add", "origin", str(origin), home=home)
    if default in git_spec.branch_files:
        _commit_files(work, git_spec.branch_files[default], f"{default}: branch files", home)
    _git(work, "push", "--quiet", "--set-upstream", "origin", default, home=home)
    # So a clone knows the remote's default branch (origin/HEAD), as after git clone.
    _git(work, "remote", "set-head", "origin", default, home=home)
    for branch in git_spec.branches:
        _git(work, "push", "--quiet", "origin", f"{default}:refs/heads/{branch}", home=home)
        if branch in git_spec.branch_files and branch != current:
            _git(work, "switch", "--quiet", "-c", branch, "--track", f"origin/{branch}", home=home)
            _commit_files(work, git_spec.branch_files[branch], f"{branch}: branch files", home)
            _git(work, "push", "--quiet", "origin", branch, home=home)
            _git(work, "switch", "--quiet", default, home=home)
    for name, tag in git_spec.tags.items():
        ref = tag.ref or default
        if tag.message is not None:
            _git(work, "tag", "-a", name, "-m", tag.message, ref, home=home)
        else:
            _git(work, "tag", name, ref, home=home)
        if tag.pushed:
            _git(work, "push", "--quiet", "origin", f"refs/tags/{name}", home=home)
    if current != default:
        if current in git_spec.branches:
            _git(work, "switch", "--quiet", "-c", current, "--track", f"origin/{current}", home=home)
        else:
            _git(work, "switch", "--quiet", "-c", current, home=home)
        if current in git_spec.branch_files:
            _commit_files(work, git_spec.branch_files[current], f"{current}: branch files", home)
        if git_spec.branch_on_origin:
            _git(work, "push", "--quiet", "--set-upstream", "origin", current, home=home)
    if git_spec.diverged:
        changes = work / "CHANGES.md"
        changes.write_text("- feature v1\n", encoding="utf-8")
        _git(work, "add", "CHANGES.md", home=home)
        _git(work, "commit", "--quiet", "-m", "feature v1", home=home)
        _git(work, "push", "--quiet", "origin", f"HEAD:refs/heads/{current}", home=home)
        changes.write_text("- feature v2, rebased\n", encoding="utf-8")
        _git(work, "commit", "--quiet", "--amend", "-a", "-m", "feature v2", home=home)
    for number in range(git_spec.ahead):
        notes = work / "NOTES.md"
        with open(notes, "a", encoding="utf-8") as handle:
            handle.write(f"- local work {number + 1}\n")
        _git(work, "add", "NOTES.md", home=home)
        _git(work, "commit", "--quiet", "-m", f"local work {number + 1}", home=home)
    if git_spec.remote_ahead:
        _teammate_pushes(root, git_spec.remote_ahead, home)
        if git_spec.fetched:
            _git(work, "fetch", "--quiet", "origin", home=home)
    if git_spec.upstream is not None:
        if git_spec.upstream == "none":
            _git(work, "branch", "--quiet", "--unset-upstream", home=home)
        else:
            _git(work, "branch", "--quiet", f"--set-upstream-to={git_spec.upstream}", home=home)
    for worktree in git_spec.worktrees:
        path = str(root / worktree.name)

        def has(ref: str) -> bool:
            return subprocess.run(["git", "rev-parse", "--verify", "--quiet", ref], cwd=work, capture_output=True,
                                  timeout=30, env=sandbox_env(root), stdin=subprocess.DEVNULL).returncode == 0

        if has(f"refs/heads/{worktree.branch}"):
            _git(work, "worktree", "add", "--quiet", path, worktree.branch, home=home)
        elif has(f"refs/remotes/origin/{worktree.branch}") and worktree.start is None:
            _git(work, "worktree", "add", "--quiet", "--track", "-b", worktree.branch, path,
                 f"origin/{worktree.branch}", home=home)
        else:
            _git(work, "worktree", "add", "--quiet", "-b", worktree.branch, path, worktree.start or default,
                 home=home)
    for rel, content in git_spec.staged.items():
        _write_file(work / rel, content)
    if git_spec.staged:
        _git(work, "add", "--", *sorted(git_spec.staged), home=home)
    for rel, content in git_spec.modified.items():
        _write_file(work / rel, content)
    # Pack every object: a copy then holds a few files instead of one folder per object.
    for repo in (work, origin):
        _git(repo, "repack", "-a", "-d", "-q", home=home)
        _git(repo, "prune-packed", home=home)
    if git_spec.protected:
        install_branch_protection(origin, list(git_spec.protected))
    for name, script in git_spec.server_hooks.items():  # after protection, which owns pre-receive
        hook = origin / "hooks" / name
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(script, encoding="utf-8")
        hook.chmod(0o755)


def _teammate_pushes(root: Path, counts: Mapping[str, int], home: Path) -> None:
    """Commits another developer pushed to the origin: made in a clone that is then removed."""
    clone = root / "tmp" / "teammate"
    _git(root, "clone", "--quiet", "--template=", str(root / "origin.git"), str(clone), home=home)
    for branch, count in counts.items():
        _git(clone, "switch", "--quiet", branch, home=home)
        for number in range(count):
            with open(clone / "TEAM.md", "a", encoding="utf-8") as handle:
                handle.write(f"- teammate work {number + 1} on {branch}\n")
            _git(clone, "add", "TEAM.md", home=home)
            _git(clone, "-c", "user.name=Teammate", "-c", "user.email=teammate@statewise.invalid", "commit",
                 "--quiet", "-m", f"teammate work {number + 1} on {branch}", home=home)
        _git(clone, "push", "--quiet", "origin", branch, home=home)
    shutil.rmtree(clone)


def instantiate(template: Path, dest: Path, spec: WorkspaceSpec) -> Sandbox:
    """Copy ``template`` to ``dest`` (which must not exist) and fix what names the template."""
    shutil.copytree(template, dest, symlinks=True)
    origin = dest / "origin.git" if spec.git is not None else None
    if origin is not None:
        config = dest / "work" / ".git" / "config"
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace(str(template / "origin.git"), str(origin)), encoding="utf-8")
        # A worktree and its main repository name each other by absolute path.
        assert spec.git is not None
        for worktree in spec.git.worktrees:
            for link in (dest / worktree.name / ".git", dest / "work" / ".git" / "worktrees" / worktree.name / "gitdir"):
                if link.is_file():
                    link.write_text(link.read_text(encoding="utf-8").replace(str(template), str(dest)),
                                    encoding="utf-8")
    branch = spec.git.current if spec.git is not None else None
    cwd = Path(os.path.normpath(dest / "work" / spec.cwd)) if spec.cwd is not None else None
    sandbox = Sandbox(root=dest, work=dest / "work", origin=origin, home=dest / "home", bin=dest / "bin",
                      user=spec.user, branch=branch, cwd=cwd,
                      default_branch=spec.git.default if spec.git is not None else None)
    extra = fill_placeholders(dict(spec.env), sandbox.placeholders())
    return dataclasses.replace(sandbox, env=sandbox_env(dest, extra))


class TemplateCache:
    """Builds each distinct workspace spec once under ``folder``; thread-safe (distinct specs
    build concurrently)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def key(self, spec: WorkspaceSpec) -> str:
        return hashlib.sha256(spec.fingerprint().encode()).hexdigest()[:16]

    def template(self, spec: WorkspaceSpec) -> Path:
        """The template's root; SandboxError if it could not be built (remembered on disk, so
        worker processes reuse what the parent built and do not retry what failed)."""
        key = self.key(spec)
        root = self.folder / f"tpl-{key}"
        done, failed = self.folder / f"tpl-{key}.complete", self.folder / f"tpl-{key}.failed"
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if done.exists():
                return root
            if failed.exists():
                raise SandboxError(failed.read_text(encoding="utf-8"))
            try:
                if root.exists():
                    shutil.rmtree(root)
                build_template(spec, root)
            except Exception as error:  # noqa: BLE001 - any failure leaves the cases unjudged
                failure = error if isinstance(error, SandboxError) else SandboxError(
                    f"building the workspace failed: {type(error).__name__}: {error}")
                self.folder.mkdir(parents=True, exist_ok=True)
                failed.write_text(str(failure), encoding="utf-8")
                raise failure from error
            done.write_text("", encoding="utf-8")
            return root
