"""Running a checked action for real: from a normalized Action to an argv, and its outcome.

Only actions the guard passed should get here. Every command is an argv list (a test command
is split with shlex, never handed to a shell), runs in the workspace with a timeout, and its
outcome is returned as data. Operations this module does not know are refused, not guessed.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from statewise.actions import Action
from statewise.errors import StateWiseError

__all__ = ["ExecutionResult", "UnsupportedAction", "command_for", "run_action"]


class UnsupportedAction(StateWiseError, ValueError):
    """The executor does not know how to run this operation."""


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _arg(action: Action, name: str, default: object = None) -> object:
    return action.args.get(name, default)


def command_for(action: Action) -> list[str]:
    """The argv that performs ``action``; UnsupportedAction if there is none."""
    op = action.operation
    if op == "git.push":
        remote = str(_arg(action, "remote", "origin"))
        branch = str(_arg(action, "branch"))
        if _arg(action, "delete"):
            return ["git", "push", remote, "--delete", branch]
        source = str(_arg(action, "source", branch))
        argv = ["git", "push"]
        if _arg(action, "force"):
            argv.append("--force")
        if _arg(action, "set_upstream"):
            argv.append("--set-upstream")
        return [*argv, remote, f"{source}:refs/heads/{branch}"]
    if op in ("git.checkout", "git.switch"):
        branch = str(_arg(action, "branch"))
        return ["git", "switch", "-c", branch] if _arg(action, "create") else ["git", "switch", branch]
    if op == "git.branch_create":
        start = _arg(action, "start_point")
        return ["git", "branch", str(_arg(action, "name")), *([str(start)] if start else [])]
    if op == "git.branch_delete":
        if _arg(action, "remote"):
            return ["git", "push", str(_arg(action, "remote")), "--delete", str(_arg(action, "branch"))]
        return ["git", "branch", "-D" if _arg(action, "force") else "-d", str(_arg(action, "branch"))]
    if op == "test.run":
        return shlex.split(str(_arg(action, "command")))
    if op == "pip.install":
        package = str(_arg(action, "package")) + str(_arg(action, "version") or "")
        return [str(_arg(action, "interpreter", "python3")), "-m", "pip", "install", package]
    if op == "venv.create":
        return [str(_arg(action, "interpreter", "python3")), "-m", "venv", "--without-pip", str(_arg(action, "path"))]
    if op in ("git.reset_hard", "git.rebase"):
        # Without its target the command would mean something else (reset to HEAD, rebase onto
        # the upstream): refused rather than guessed.
        needed = "ref" if op == "git.reset_hard" else "onto"
        target = _arg(action, needed)
        if not isinstance(target, str) or not target:
            raise UnsupportedAction(f"{op} needs a {needed} argument")
        if op == "git.reset_hard":
            return ["git", "reset", "--hard", target]
        rebased = _arg(action, "branch")
        return ["git", "rebase", target, *([str(rebased)] if rebased else [])]
    if op == "git.clean":
        flags = "-f" + ("d" if _arg(action, "directories") else "") + ("x" if _arg(action, "ignored") else "")
        paths = _arg(action, "paths")
        named = [str(path) for path in paths] if isinstance(paths, list) else []
        return ["git", "clean", flags, *(["--", *named] if named else [])]
    raise UnsupportedAction(f"the executor does not run {op}")


def run_action(action: Action, workspace: str | Path, *, env: Mapping[str, str] | None = None,
               timeout: float = 120.0) -> ExecutionResult:
    """Perform ``action`` in ``workspace`` and report what happened."""
    started = time.perf_counter()
    workspace = Path(workspace)
    if action.operation == "fs.delete":
        target = (workspace / str(_arg(action, "path"))).resolve()
        argv = ("fs.delete", str(target))
        root = workspace.resolve()
        if target == root or root not in target.parents:
            # The gate's invariants already refuse this; the executor refuses it too.
            return ExecutionResult(argv, 126, "", f"refusing to delete {target}: not inside {root}",
                                   time.perf_counter() - started)
        try:
            if target.is_dir() and _arg(action, "recursive"):
                shutil.rmtree(target)
            else:
                target.unlink()
        except OSError as error:
            return ExecutionResult(argv, 1, "", str(error), time.perf_counter() - started)
        return ExecutionResult(argv, 0, "", "", time.perf_counter() - started)
    command = command_for(action)
    try:
        done = subprocess.run(command, cwd=workspace, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=dict(env) if env is not None else None)
    except subprocess.TimeoutExpired as error:
        return ExecutionResult(tuple(command), 124, str(error.stdout or ""), f"timed out after {timeout}s",
                               time.perf_counter() - started)
    except OSError as error:
        return ExecutionResult(tuple(command), 127, "", str(error), time.perf_counter() - started)
    return ExecutionResult(tuple(command), done.returncode, done.stdout, done.stderr, time.perf_counter() - started)
