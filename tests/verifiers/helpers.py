"""Helpers for the verifier tests: real repositories, real files, tool shims (no mocks)."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewise.contract import VerifierSpec
from statewise.scopes import TaskScope
from statewise.values import ValueType
from statewise.verifiers import Observation, VerifierRequest, fill_placeholders, run_verifier

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git for test setup (this is the test writing, not a verifier)."""
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **GIT_ENV},
        stdin=subprocess.DEVNULL,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


def commit(repo: Path, name: str, content: str, message: str | None = None) -> str:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(content, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message or f"change {name}")
    return git(repo, "rev-parse", "HEAD").stdout.strip()


@dataclass
class Repo:
    """A working tree with a bare local origin: main and feature pushed with upstreams."""

    root: Path
    work: Path
    origin: Path


def make_repo(root: Path) -> Repo:
    root.mkdir(parents=True, exist_ok=True)
    origin = root / "origin.git"
    work = root / "work"
    git(root, "init", "-q", "--bare", str(origin))
    git(root, "init", "-q", str(work))
    git(work, "remote", "add", "origin", str(origin))
    commit(work, "README.md", "hello\n", "initial")
    git(work, "push", "-q", "-u", "origin", "main")
    git(work, "switch", "-q", "-c", "feature")
    commit(work, "feature.txt", "feature\n")
    git(work, "push", "-q", "-u", "origin", "feature")
    git(work, "switch", "-q", "main")
    return Repo(root, work, origin)


def write_exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def shim(directory: Path, name: str, body: str) -> Path:
    """A small POSIX sh tool shim (e.g. a node that prints a version)."""
    return write_exe(directory / name, "#!/bin/sh\n" + body + "\n")


def private_env(*path_dirs: Path, keep_system_path: bool = True, **extra: str) -> dict[str, str]:
    """An agent environment with ``path_dirs`` first on PATH."""
    parts = [str(p) for p in path_dirs]
    if keep_system_path:
        parts.append(os.environ.get("PATH", os.defpath))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    env["PATH"] = os.pathsep.join(parts)
    env.update(extra)
    return env


def observe(
    adapter: str,
    workspace: Path,
    *,
    value_type: str,
    args: Mapping[str, Any] | None = None,
    choices: tuple[str, ...] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 10,
    task: TaskScope | None = None,
    key: str = "test.key",
    qualifier: str | None = None,
) -> Observation:
    """Run a built-in adapter through run_verifier, as the pipeline does."""
    spec = VerifierSpec(adapter=adapter, args=dict(args or {}), timeout=timeout)
    return _run(spec, workspace, value_type, choices, env, timeout, task, key, qualifier)


def observe_command(
    workspace: Path,
    argv: list[str],
    read: Mapping[str, Any],
    *,
    value_type: str,
    choices: tuple[str, ...] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 10,
    stream: str | None = None,
    cwd: str | None = None,
    qualifier: str | None = None,
) -> Observation:
    spec = VerifierSpec.model_validate(
        {"adapter": "command", "argv": argv, "read": dict(read), "timeout": timeout, "stream": stream, "cwd": cwd}
    )
    return _run(spec, workspace, value_type, choices, env, timeout, None, "test.key", qualifier)


def _run(spec, workspace, value_type, choices, env, timeout, task, key, qualifier) -> Observation:
    task = task or TaskScope(workspace=str(workspace))
    args = fill_placeholders(
        spec, workspace=workspace, branch=task.branch, repo=task.repo, user=task.user, qualifier=qualifier
    )
    request = VerifierRequest(
        key=key,
        qualifier=qualifier,
        value_type=ValueType(value_type),
        choices=choices,
        args=args,
        workspace=Path(workspace),
        task=task,
        timeout=timeout,
        environ=env,
    )
    return run_verifier(spec, request)
