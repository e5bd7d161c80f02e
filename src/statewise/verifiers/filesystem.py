"""Filesystem adapters: does a path exist, is it a directory, where does it really point.

Paths are relative to the workspace (absolute paths are accepted too). ``fs.exists`` and
``fs.is_dir`` refuse a path that leaves the workspace lexically (``../x``, ``/etc/x``): the
keys are workspace facts, and a record should not become a probe of the rest of the
machine. Such a request is UNAVAILABLE, never an answer. A symlink inside the workspace
that points outside is still followed, as the agent's own tools would follow it.
``fs.realpath`` is meant for the workspace itself and takes any absolute path.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

from statewise.verifiers.base import Adapter, Observation, VerifierArgumentError, VerifierRequest, within

__all__ = ["Exists", "GlobMatches", "IsDir", "RealPath", "workspace_path"]


def workspace_path(workspace: Path, path: str) -> str:
    """``path`` made absolute against ``workspace``; VerifierArgumentError if it leaves the workspace."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise VerifierArgumentError(f"{path!r} is not a path")
    root = posixpath.normpath(os.path.abspath(workspace))
    joined = posixpath.normpath(path if posixpath.isabs(path) else posixpath.join(root, path))
    if not within(joined, root):
        raise VerifierArgumentError(f"{path} is outside the workspace {root}; only workspace paths are observed")
    return joined


def _stat(path: str) -> tuple[os.stat_result | None, Observation | None, bool]:
    """(stat following symlinks or None if missing, UNAVAILABLE on error, is a dangling symlink)."""
    try:
        return os.stat(path), None, False
    except (FileNotFoundError, NotADirectoryError):
        dangling = os.path.islink(path)
        return None, None, dangling
    except OSError as error:
        return None, Observation.unavailable(f"cannot look at {path}: {error.strerror or error}"), False


class _PathAdapter(Adapter):
    args = frozenset({"path"})
    required = frozenset({"path"})


class Exists(_PathAdapter):
    """``fs.exists`` (bool): whether ``path`` exists (symlinks followed; a dangling one does not)."""

    name = "fs.exists"

    def _observe(self, request: VerifierRequest) -> Observation:
        path = workspace_path(self.workspace(request), str(request.args["path"]))
        info, problem, dangling = _stat(path)
        if problem is not None:
            return problem
        if info is None:
            why = " (a dangling symlink)" if dangling else ""
            return Observation.of(False, f"{path} does not exist{why}", path)
        return Observation.of(True, f"{path} exists", path)


class IsDir(_PathAdapter):
    """``fs.is_dir`` (bool): whether ``path`` is a directory (false when it does not exist)."""

    name = "fs.is_dir"

    def _observe(self, request: VerifierRequest) -> Observation:
        path = workspace_path(self.workspace(request), str(request.args["path"]))
        info, problem, _ = _stat(path)
        if problem is not None:
            return problem
        if info is None:
            return Observation.of(False, f"{path} does not exist", path)
        is_dir = stat.S_ISDIR(info.st_mode)
        return Observation.of(is_dir, f"{path} is {'a directory' if is_dir else 'not a directory'}", path)


class RealPath(_PathAdapter):
    """``fs.realpath`` (path): the absolute, symlink-free path of ``path``. ABSENT if it does not exist."""

    name = "fs.realpath"

    def _observe(self, request: VerifierRequest) -> Observation:
        given = str(request.args["path"])
        path = given if os.path.isabs(given) else os.path.join(self.workspace(request), given)
        try:
            real = os.path.realpath(path, strict=True)
        except (FileNotFoundError, NotADirectoryError):
            return Observation.absent(f"{path} does not exist", path)
        except OSError as error:
            return Observation.unavailable(f"cannot resolve {path}: {error.strerror or error}", path)
        return Observation.of(real, f"{path} resolves to {real}", path)


class GlobMatches(Adapter):
    """``fs.glob_matches`` (bool): whether some file or folder of the workspace matches glob
    ``pattern`` (``*`` and ``?`` within a folder, ``**`` across folders; relative to the
    workspace, which it may not leave). The walk stops at the first match; a walk that
    overruns the binding's timeout is UNAVAILABLE (the runner's rule), never no.
    """

    name = "fs.glob_matches"
    args = frozenset({"pattern"})
    required = frozenset({"pattern"})

    def _observe(self, request: VerifierRequest) -> Observation:
        pattern = str(request.args["pattern"]).rstrip("/")
        root = Path(os.path.abspath(self.workspace(request)))
        if not pattern or posixpath.isabs(pattern) or ".." in pattern.split("/"):
            raise VerifierArgumentError(f"{pattern!r} is not a glob relative to the workspace")
        match = next(iter(root.glob(pattern)), None)
        if match is None:
            return Observation.of(False, f"nothing in {root} matches {pattern}", str(root))
        return Observation.of(True, f"{match} matches {pattern}", str(match))
