"""Python adapters: the interpreter a workspace resolves to, its version, venv and packages.

The workspace's interpreter is, in order: the ``interpreter`` argument (a path, relative to
the workspace, or a command name looked up on PATH); ``<venv>/bin/python`` of the first
virtual environment found in the workspace (a directory named ``.venv`` or ``venv`` that
holds a ``pyvenv.cfg``; the ``venv`` argument may list other names); else ``python3`` on the
agent's PATH. Interpreters always run with ``-B`` (and ``PYTHONDONTWRITEBYTECODE=1``), so
nothing in a workspace venv gets a ``__pycache__``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from statewise.verifiers.base import (
    Adapter,
    Deadline,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    has_control,
    run_command,
    strict_output,
    which,
)

__all__ = [
    "Interpreter",
    "PackageVersion",
    "PythonVersion",
    "Venv",
    "find_venv",
    "interpreter_of_executable",
    "resolve_interpreter",
    "resolve_shim",
]

DEFAULT_VENV_NAMES = (".venv", "venv")
_PYTHON_VERSION = re.compile(r"Python\s+(\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?)")
# What importlib.metadata.version() can return for a real distribution (PEP 440 and legacy).
_PRINTED_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+!_-]*$")
_DISTRIBUTION = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")

# Runs inside the workspace's interpreter: the distribution name arrives as argv[1] and is
# never interpolated into code. The working directory is dropped from sys.path so a
# project's own *.egg-info in the workspace root does not count as installed.
_PACKAGE_PROGRAM = """\
import sys
sys.path[:] = [p for p in sys.path if p not in ('', '.')]
try:
    from importlib import metadata
except ImportError:
    try:
        import importlib_metadata as metadata
    except ImportError:
        sys.exit(4)
try:
    version = metadata.version(sys.argv[1])
except metadata.PackageNotFoundError:
    sys.exit(3)
sys.stdout.write(str(version) + "\\n")
"""

_EXECUTABLE_PROGRAM = "import sys; sys.stdout.write(sys.executable or '')"


def _venv_names(request: VerifierRequest) -> tuple[str, ...]:
    given = request.args.get("venv")
    if given is None or given == "":
        return DEFAULT_VENV_NAMES
    names = (given,) if isinstance(given, str) else tuple(given)
    if not all(isinstance(name, str) and name for name in names):
        raise VerifierArgumentError(f"venv must name directories, got {given!r}")
    return names


def find_venv(workspace: Path, names: tuple[str, ...] = DEFAULT_VENV_NAMES) -> Path | None:
    """The first ``<workspace>/<name>`` that is a virtual environment (has ``pyvenv.cfg``)."""
    for name in names:
        candidate = Path(name) if os.path.isabs(name) else workspace / name
        if (candidate / "pyvenv.cfg").is_file():
            return Path(os.path.abspath(candidate))
    return None


@dataclass(frozen=True)
class _Resolved:
    path: str | None
    how: str
    problem: Observation | None = None


def resolve_interpreter(request: VerifierRequest, workspace: Path) -> _Resolved:
    """The interpreter the workspace resolves to (see the module documentation)."""
    named = request.args.get("interpreter")
    if named:
        if not isinstance(named, str):
            raise VerifierArgumentError(f"interpreter must be a string, got {named!r}")
        if "/" in named:
            path = named if os.path.isabs(named) else str(workspace / named)
            path = os.path.abspath(path)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return _Resolved(path, f"the interpreter the binding names ({named})")
            return _Resolved(
                None, "", Observation.absent(f"the interpreter {path} does not exist or is not executable")
            )
        found = which(named, request.env, workspace)
        if found:
            return _Resolved(found, f"{named} on PATH")
        return _Resolved(None, "", Observation.absent(f"{named} is not on the agent's PATH"))
    venv = find_venv(workspace, _venv_names(request))
    if venv is not None:
        for name in ("python", "python3"):
            candidate = venv / "bin" / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return _Resolved(str(candidate), f"the workspace's virtual environment {venv}")
        return _Resolved(
            None, "", Observation.unavailable(f"the virtual environment {venv} has no executable bin/python (broken?)")
        )
    found = which("python3", request.env, workspace)
    if found:
        return _Resolved(found, "python3 on PATH (the workspace has no virtual environment)")
    return _Resolved(None, "", Observation.absent("no virtual environment in the workspace and no python3 on PATH"))


# A version manager's shim is a small script (pyenv, asdf) or a link to the manager (mise)
# that picks the real executable at run time; `<manager> which <name>` names it read-only.
_SHIM_EXEC = re.compile(r'exec\s+"?(?P<manager>(?:[^"\s]*/)?(?:pyenv|asdf|mise))"?\s+(?:exec|x)\b')
_SHIM_EXPORT = re.compile(r'^export\s+([A-Z_][A-Z0-9_]*)="([^"$`]*)"\s*$', re.MULTILINE)
_MAX_SHIM_BYTES = 8192


def resolve_shim(path: str, env: Mapping[str, str], cwd: str | os.PathLike[str], timeout: float = 5.0
                 ) -> tuple[str | None, str]:
    """The real executable behind a pyenv, asdf or mise shim at ``path``.

    Returns ``(real path, how)``; ``(None, "")`` when ``path`` is not a shim, and
    ``(None, why)`` when it is one whose manager could not say (the version it selects is not
    installed, the manager timed out). ``cwd`` matters: a ``.python-version`` or
    ``.tool-versions`` there selects the version. Runs ``<manager> which <name>`` only.
    """
    name = os.path.basename(path)
    real = os.path.realpath(path)
    manager: str | None = None
    if os.path.basename(real) == "mise" and os.path.basename(path) != "mise":
        manager = real
    else:
        try:
            with open(path, "rb") as handle:
                head = handle.read(_MAX_SHIM_BYTES)
        except OSError:
            return None, ""
        if not head.startswith(b"#!"):
            return None, ""
        match = _SHIM_EXEC.search(head.decode("utf-8", "replace"))
        if match is None:
            return None, ""
        manager = match.group("manager")
        if "/" not in manager:
            manager = which(manager, env, Path(cwd)) or manager
        # The shim exports its manager's root (PYENV_ROOT=...) before it execs: do the same.
        env = {**{k: v for k, v in _SHIM_EXPORT.findall(head.decode("utf-8", "replace"))}, **env}
    result = run_command([manager, "which", name], cwd=cwd, timeout=timeout, env=env)
    found = result.stdout.strip().splitlines()[-1] if result.ok and result.stdout.strip() else ""
    if not found or not os.path.isabs(found):
        return None, f"{path} is a {os.path.basename(manager)} shim, and `{os.path.basename(manager)} which {name}` " \
                     f"did not name an executable ({result.describe_failure() if not result.ok else 'no output'})"
    return found, f"{path} is a {os.path.basename(manager)} shim for {found}"


def interpreter_of_executable(path: str, env: Mapping[str, str], cwd: str | os.PathLike[str],
                              timeout: float = 5.0) -> tuple[str | None, str]:
    """The Python interpreter a Python executable (``pip``, ``pytest``, a console script, or an
    interpreter) runs in, and how that was found.

    In order: a pyenv/asdf/mise shim is resolved to the executable it selects; an executable in
    a virtual environment's ``bin`` runs in that environment's ``python``; a Python
    interpreter is itself; otherwise the script's shebang names it (``#!/usr/bin/env
    python3`` looked up on ``env['PATH']``, and resolved again if that is a shim). ``(None,
    why)`` when it cannot be told; a shim is never taken for the shell that runs it.
    """
    for _ in range(4):  # a shim's target may be a script whose shebang is another shim
        real, how = resolve_shim(path, env, cwd, timeout)
        if how and real is None:
            return None, how
        if real is not None:
            path = real
        directory = os.path.dirname(path)
        if os.path.isfile(os.path.join(os.path.dirname(directory), "pyvenv.cfg")):
            for candidate in ("python", "python3"):
                if os.path.exists(os.path.join(directory, candidate)):
                    return (os.path.join(directory, candidate),
                            f"{path} is in the virtual environment {os.path.dirname(directory)}")
        if re.match(r"^python(?:\d+(?:\.\d+)?)?$", os.path.basename(path)):
            return path, f"{path} is an interpreter"
        try:
            with open(path, "rb") as handle:
                first = handle.readline(512).decode("utf-8", "replace").strip()
        except OSError as error:
            return None, f"cannot read {path}: {error.strerror or error}"
        if not first.startswith("#!"):
            return None, f"{path} has no shebang"
        parts = first[2:].split()
        if parts and parts[0].endswith("/env") and len(parts) > 1:
            found = which(parts[-1], env, Path(cwd))
            if found is None:
                return None, f"{path} runs {parts[-1]}, which is not on PATH"
            path = found
            continue
        if not parts:
            return None, f"{path} has an empty shebang"
        path = parts[0]
    return None, f"{path}: too many levels of shims and shebangs"


class _PythonAdapter(Adapter):
    args = frozenset({"interpreter", "venv"})

    def interpreter(self, request: VerifierRequest) -> _Resolved:
        return resolve_interpreter(request, self.workspace(request))


class PythonVersion(_PythonAdapter):
    """``python.version`` (version): ``<interpreter> --version``, ``Python 3.11.7`` -> ``3.11.7``.

    ABSENT when no interpreter resolves (no venv, no python3 on PATH, or the named one is
    missing). UNAVAILABLE when it does not run, times out or prints no version.
    """

    name = "python.version"

    def _observe(self, request: VerifierRequest) -> Observation:
        resolved = self.interpreter(request)
        if resolved.problem is not None:
            return resolved.problem
        assert resolved.path is not None
        result = run_command(
            [resolved.path, "--version"], cwd=self.workspace(request), timeout=request.timeout, env=request.env
        )
        if not result.ok:
            return Observation.unavailable(result.describe_failure(), result.reference)
        printed = (result.strict_stdout() or "") + "\n" + (result.strict_stderr() or "")
        match = _PYTHON_VERSION.search(printed)
        if match is None:
            printed = (result.stdout + result.stderr).strip()[:100]
            return Observation.unavailable(
                f"{resolved.path} --version printed no version: {printed!r}", result.reference
            )
        return Observation.of(
            match.group(1), f"{resolved.path} ({resolved.how}) is Python {match.group(1)}", result.reference
        )


class Interpreter(_PythonAdapter):
    """``python.interpreter`` (path): the interpreter's own ``sys.executable``.

    For a venv that is ``<workspace>/.venv/bin/python``; for ``python3`` on PATH it is the
    real binary (so a pyenv shim resolves to the version it selects).
    """

    name = "python.interpreter"

    def _observe(self, request: VerifierRequest) -> Observation:
        resolved = self.interpreter(request)
        if resolved.problem is not None:
            return resolved.problem
        assert resolved.path is not None
        result = run_command(
            [resolved.path, "-B", "-c", _EXECUTABLE_PROGRAM],
            cwd=self.workspace(request),
            timeout=request.timeout,
            env=request.env,
        )
        if not result.ok:
            return Observation.unavailable(result.describe_failure(), result.reference)
        text = strict_output(result, resolved.path)
        if isinstance(text, Observation):
            return text
        executable = text.strip()
        if not executable:
            # Python leaves sys.executable empty when it cannot tell; that is not a path.
            return Observation.unavailable(f"{resolved.path} could not tell its own sys.executable", result.reference)
        if not os.path.isabs(executable) or has_control(executable) or "\n" in executable:
            return Observation.unavailable(
                f"{resolved.path} printed {executable[:100]!r}, not an absolute path", result.reference
            )
        # Inside a virtual environment, `bin/python` names it whichever alias ran (python3,
        # python3.11): the same spelling the shell normalizer gives pip's interpreter.
        bin_dir = os.path.dirname(executable)
        canonical = os.path.join(bin_dir, "python")
        if (canonical != executable and os.path.isfile(os.path.join(os.path.dirname(bin_dir), "pyvenv.cfg"))
                and os.path.exists(canonical)):
            executable = canonical
        return Observation.of(executable, f"{resolved.how}: sys.executable is {executable}", result.reference)


class Venv(_PythonAdapter):
    """``python.venv``: the workspace's virtual environment.

    ``field: path`` (default; path): its absolute path, ABSENT when the workspace has none.
    ``field: active`` (bool): whether the agent's environment has it activated
    (``VIRTUAL_ENV`` names it); false when there is no venv.
    """

    name = "python.venv"
    args = frozenset({"field", "venv"})

    def _observe(self, request: VerifierRequest) -> Observation:
        field = self.text_arg(request, "field", "path")
        if field not in ("path", "active"):
            raise VerifierArgumentError(f"field must be path or active, not {field!r}")
        workspace = self.workspace(request)
        names = _venv_names(request)
        venv = find_venv(workspace, names)
        looked = ", ".join(names)
        if field == "path":
            if venv is None:
                return Observation.absent(f"no virtual environment ({looked} with pyvenv.cfg) in {workspace}")
            return Observation.of(str(venv), f"virtual environment {venv} (has pyvenv.cfg)", str(venv / "pyvenv.cfg"))
        active = request.env.get("VIRTUAL_ENV") or ""
        if venv is None:
            return Observation.of(False, f"no virtual environment ({looked}) in {workspace}, so none is active")
        is_active = bool(active) and os.path.realpath(active) == os.path.realpath(venv)
        shown = active or "unset"
        return Observation.of(
            is_active, f"VIRTUAL_ENV is {shown}; the workspace's virtual environment is {venv}", "VIRTUAL_ENV"
        )


class PackageVersion(_PythonAdapter):
    """``python.package_version`` (version): the installed version of distribution ``package``.

    Asks the workspace's interpreter (``importlib.metadata.version``) with a fixed ``-c``
    program that receives the name as ``argv[1]``. ABSENT when the distribution is not
    installed in that interpreter.
    """

    name = "python.package_version"
    args = frozenset({"package", "interpreter", "venv"})
    required = frozenset({"package"})

    def _observe(self, request: VerifierRequest) -> Observation:
        package = self.text_arg(request, "package") or ""
        if not _DISTRIBUTION.match(package):
            raise VerifierArgumentError(f"{package!r} is not a valid distribution name")
        deadline = Deadline(request.timeout)
        resolved = self.interpreter(request)
        if resolved.problem is not None:
            return resolved.problem
        assert resolved.path is not None
        result = run_command(
            [resolved.path, "-B", "-c", _PACKAGE_PROGRAM, package],
            cwd=self.workspace(request),
            timeout=deadline.remaining(),
            env=request.env,
        )
        if result.error is None and result.returncode == 3:
            return Observation.absent(
                f"{package} is not installed for {resolved.path} ({resolved.how})", result.reference
            )
        if result.error is None and result.returncode == 4:
            return Observation.unavailable(f"{resolved.path} has no importlib.metadata", result.reference)
        if not result.ok:
            return Observation.unavailable(result.describe_failure(), result.reference)
        text = strict_output(result, resolved.path)
        if isinstance(text, Observation):
            return text
        version = text.strip()
        if not _PRINTED_VERSION.match(version):
            return Observation.unavailable(
                f"{resolved.path} printed {version[:80]!r} for {package}, not a version", result.reference
            )
        return Observation.of(
            version, f"{package} {version} is installed for {resolved.path} ({resolved.how})", result.reference
        )
