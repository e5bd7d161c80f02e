"""The verifier interface and the helpers every built-in adapter uses.

A verifier *adapter* observes one kind of fact in the live workspace (the checked-out
branch, the interpreter's version, a value in a config file) and answers with an
:class:`Observation`. It is read-only: it never writes a file, a ref, an index or a lock.
It never raises either; :func:`statewise.verifiers.run_verifier` turns anything unexpected
into an ``UNAVAILABLE`` observation, so a broken verifier can never confirm a record.

Subprocesses go through :func:`run_command`: an argv list (never a shell string), a
timeout that kills the whole process group, ``stdin`` closed, run in the workspace, with
``GIT_TERMINAL_PROMPT=0``, ``GIT_OPTIONAL_LOCKS=0`` (``git status`` then leaves
``.git/index`` alone), ``LC_ALL=C`` and ``PYTHONDONTWRITEBYTECODE=1``.
"""

from __future__ import annotations

import enum
import json
import os
import posixpath
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from statewise.errors import InputError
from statewise.scopes import TaskScope
from statewise.values import ValueType

__all__ = [
    "SAFE_ENVIRONMENT",
    "Adapter",
    "CommandResult",
    "Deadline",
    "Observation",
    "ObservationStatus",
    "Verifier",
    "VerifierArgumentError",
    "VerifierRequest",
    "coerce_native",
    "find_version",
    "has_control",
    "normalize_version",
    "parse_text_value",
    "render_scalar",
    "run_command",
    "strict_output",
    "which",
    "within",
]

# Forced on every subprocess a verifier starts.
SAFE_ENVIRONMENT: Mapping[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",  # never ask for credentials
    "GIT_OPTIONAL_LOCKS": "0",  # git status must not refresh (rewrite) .git/index
    "LC_ALL": "C",  # parseable, untranslated output
    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in a workspace venv
}


class ObservationStatus(str, enum.Enum):
    """What a verifier could establish."""

    OBSERVED = "observed"
    """The value was read from the live workspace."""
    ABSENT = "absent"
    """The thing verifiably does not exist (the package is not installed, the remote has no
    such branch). Only used where absence is itself a definite observation."""
    UNAVAILABLE = "unavailable"
    """Nothing could be decided: a timeout, a missing tool, a parse failure, a permission
    error, a value of the wrong type. Never evidence either way."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class VerifierRequest:
    """Everything an adapter needs to observe one key for one task.

    ``args`` are the binding's arguments with every placeholder already filled (for the
    ``command`` adapter they also hold ``argv``, ``cwd``, ``stream`` and ``read``; see
    :func:`statewise.verifiers.fill_placeholders`). ``timeout`` is the total budget in
    seconds. ``environ`` is the agent's process environment (None: this process's own
    ``os.environ``); adapters read environment variables and ``PATH`` from it and pass it to
    every subprocess.
    """

    key: str
    qualifier: str | None
    value_type: ValueType
    choices: tuple[str, ...] | None
    args: Mapping[str, Any]
    workspace: Path
    task: TaskScope
    timeout: float
    environ: Mapping[str, str] | None = None

    @property
    def env(self) -> Mapping[str, str]:
        """The environment the agent's tools run in."""
        return os.environ if self.environ is None else self.environ


@dataclass(frozen=True, slots=True)
class Observation:
    """What a verifier saw.

    ``value`` is set only when ``status`` is OBSERVED. ``detail`` says in one human-readable
    line what was looked at (and, when UNAVAILABLE, why nothing could be decided);
    ``reference`` points at the source (the argv that ran, the file, the URL); ``elapsed``
    is wall time in seconds.
    """

    status: ObservationStatus
    value: Any = None
    detail: str = ""
    reference: str | None = None
    elapsed: float = 0.0

    @property
    def observed(self) -> bool:
        return self.status is ObservationStatus.OBSERVED

    @classmethod
    def of(cls, value: Any, detail: str, reference: str | None = None) -> Observation:
        return cls(ObservationStatus.OBSERVED, value, detail, reference)

    @classmethod
    def absent(cls, detail: str, reference: str | None = None) -> Observation:
        return cls(ObservationStatus.ABSENT, None, detail, reference)

    @classmethod
    def unavailable(cls, detail: str, reference: str | None = None) -> Observation:
        return cls(ObservationStatus.UNAVAILABLE, None, detail, reference)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for reports."""
        return {
            "status": self.status.value,
            "value": self.value,
            "detail": self.detail,
            "reference": self.reference,
            "elapsed": round(self.elapsed, 4),
        }


@runtime_checkable
class Verifier(Protocol):
    """A verifier adapter. Registered classes are instantiated with no arguments."""

    name: str

    def observe(self, request: VerifierRequest) -> Observation:
        """Observe ``request.key`` in the live workspace. Read-only; should not raise."""
        ...


class VerifierArgumentError(InputError):
    """A binding gave an adapter an argument it does not take, or a bad value for one."""


class Adapter:
    """Base class of the built-in adapters: argument checking and the workspace.

    Subclasses set ``name``, ``args`` (allowed argument names) and implement
    :meth:`_observe`. A :class:`VerifierArgumentError` raised there becomes UNAVAILABLE with
    its message.
    """

    name: str = ""
    args: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()

    def observe(self, request: VerifierRequest) -> Observation:
        unknown = sorted(set(request.args) - self.args - {"workspace"})
        if unknown:
            allowed = ", ".join(sorted(self.args | {"workspace"}))
            return Observation.unavailable(f"{self.name}: unknown argument(s) {', '.join(unknown)}; it takes {allowed}")
        missing = sorted(name for name in self.required if _blank(request.args.get(name)))
        if missing:
            return Observation.unavailable(f"{self.name}: no value for argument(s) {', '.join(missing)}")
        try:
            return self._observe(request)
        except VerifierArgumentError as error:
            return Observation.unavailable(f"{self.name}: {error}")

    def _observe(self, request: VerifierRequest) -> Observation:  # pragma: no cover - abstract
        raise NotImplementedError

    # --- helpers -------------------------------------------------------------------------

    @staticmethod
    def workspace(request: VerifierRequest) -> Path:
        """The workspace: ``args.workspace`` if the binding gives one, else the request's."""
        given = request.args.get("workspace")
        if given is None or given == "":
            return Path(request.workspace)
        path = Path(str(given))
        return path if path.is_absolute() else Path(request.workspace) / path

    @staticmethod
    def arg(request: VerifierRequest, name: str, default: Any = None) -> Any:
        value = request.args.get(name, default)
        return default if value is None else value

    @staticmethod
    def text_arg(request: VerifierRequest, name: str, default: str | None = None) -> str | None:
        value = request.args.get(name)
        if value is None or value == "":
            return default
        if not isinstance(value, str):
            raise VerifierArgumentError(f"argument {name} must be a string, not {value!r}")
        return value


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


# --- subprocesses --------------------------------------------------------------------------


class Deadline:
    """A total time budget shared by the several commands one observation may run."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self._end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a command ended. ``error`` is set when it could not start or did not finish."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    elapsed: float = 0.0
    timed_out: bool = False
    error: str | None = None
    cwd: str = ""
    raw_stdout: bytes = field(default=b"", repr=False)
    raw_stderr: bytes = field(default=b"", repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def reference(self) -> str:
        """The argv that ran, shell-quoted for reading (never executed as a string)."""
        import shlex

        return shlex.join(self.argv)

    def strict_stdout(self) -> str | None:
        """Standard output decoded as strict UTF-8, or None when it is not valid UTF-8.

        ``stdout`` replaces undecodable bytes (for messages); a verifier that reads a *value*
        from the output uses this instead, so bytes it cannot decode are never a value."""
        try:
            return self.raw_stdout.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def strict_stderr(self) -> str | None:
        """Standard error decoded as strict UTF-8, or None when it is not valid UTF-8."""
        try:
            return self.raw_stderr.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def describe_failure(self) -> str:
        """One line: why the command did not give an answer."""
        if self.error is not None:
            return self.error
        tail = (self.stderr.strip() or self.stdout.strip()).splitlines()
        last = tail[-1][:200] if tail else "no output"
        return f"{self.argv[0]} exited with status {self.returncode}: {last}"


def which(name: str, env: Mapping[str, str], workspace: Path, path: str | None = None) -> str | None:
    """Where ``name`` resolves on ``PATH`` (``path`` if given, else ``env['PATH']``).

    Relative ``PATH`` entries are taken relative to the workspace (where the agent's tools
    run), never to this process's working directory. Names containing ``/`` are not looked
    up (return None).
    """
    if not name or "/" in name or "\x00" in name:
        return None
    search = env.get("PATH", os.defpath) if path is None else path
    entries = []
    for entry in search.split(os.pathsep):
        entry = entry or "."
        entries.append(entry if os.path.isabs(entry) else str(Path(workspace) / entry))
    found = shutil.which(name, path=os.pathsep.join(entries))
    return os.path.abspath(found) if found else None


def run_command(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> CommandResult:
    """Run ``argv`` read-only and never raise.

    ``argv`` is a list passed to ``exec`` as is (no shell). The program is looked up on
    ``env['PATH']`` (relative entries against ``cwd``). ``stdin`` is ``/dev/null``; the
    command runs in its own process group, and when ``timeout`` passes the whole group is
    killed, so a child that forked a sleeper cannot keep the call waiting.
    """
    args = tuple(str(a) for a in argv)
    base = dict(os.environ if env is None else env)
    base.update(SAFE_ENVIRONMENT)
    if "GIT_SSH_COMMAND" not in base and "GIT_SSH" not in base:
        base["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"  # never prompt for a password
    start = time.monotonic()
    cwd_text = os.fspath(cwd)
    if not args or not args[0]:
        return CommandResult(args, None, error="empty argv", cwd=cwd_text)
    if timeout <= 0:
        return CommandResult(args, None, timed_out=True, error=f"no time left to run {args[0]}", cwd=cwd_text)
    if not os.path.isdir(cwd_text):
        return CommandResult(args, None, error=f"working directory {cwd_text} does not exist", cwd=cwd_text)
    program = args[0]
    if "/" not in program:
        resolved = which(program, base, Path(cwd_text))
        if resolved is None:
            return CommandResult(args, None, error=f"{program}: not found on PATH", cwd=cwd_text)
        program = resolved
    try:
        process = subprocess.Popen(  # noqa: S603 - an argv list, never a shell
            (program, *args[1:]),
            cwd=cwd_text,
            env=base,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            shell=False,
        )
    except OSError as error:
        return CommandResult(
            args,
            None,
            error=f"{args[0]}: cannot run: {error.strerror or error}",
            cwd=cwd_text,
            elapsed=time.monotonic() - start,
        )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        try:
            out, err = process.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a child escaped the group
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
            process.wait()
            out, err = b"", b""
        return CommandResult(
            args,
            None,
            _decode(out),
            _decode(err),
            time.monotonic() - start,
            timed_out=True,
            error=f"{args[0]} did not finish within {timeout:g}s (killed)",
            cwd=cwd_text,
        )
    except BaseException:
        _kill_group(process)
        process.wait()
        raise
    return CommandResult(
        args, process.returncode, _decode(out), _decode(err), time.monotonic() - start, cwd=cwd_text,
        raw_stdout=out or b"", raw_stderr=err or b"",
    )


def strict_output(result: CommandResult, what: str | None = None) -> str | Observation:
    """``result``'s standard output as strict UTF-8, or UNAVAILABLE saying it is not text.

    For verifiers that read a value from what a tool printed: undecodable bytes are garbage,
    and garbage is never read as a value (an empty or unparseable answer decides nothing)."""
    text = result.strict_stdout()
    if text is None:
        name = what or (result.argv[0] if result.argv else "the command")
        return Observation.unavailable(
            f"{name} printed bytes that are not UTF-8 text; nothing was read from them", result.reference
        )
    return text


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")


def has_control(text: str) -> bool:
    """True when ``text`` holds control characters (tabs and newlines aside) or U+FFFD."""
    return bool(_CONTROL.search(text))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:  # pragma: no cover
        pass


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


# --- typing observed text ---------------------------------------------------------------------

_INT = re.compile(r"^[+-]?\d+$")
_VERSION_IN_TEXT = re.compile(r"v?(\d+(?:\.\d+)*(?:[-.+_]?[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)")


def normalize_version(text: str) -> str:
    """``v20.1.0`` -> ``20.1.0``: verifiers report versions without a leading ``v``."""
    text = text.strip()
    return text[1:] if len(text) > 1 and text[0] in "vV" and text[1].isdigit() else text


def parse_text_value(text: str, value_type: ValueType, choices: Sequence[str] | None = None) -> Any:
    """Turn text a tool printed into a value of ``value_type``; ValueError if it cannot.

    * ``bool``: ``true`` or ``false`` (any case, surrounding blanks ignored); nothing else.
    * ``int``: decimal digits with an optional sign.
    * ``version``: the stripped text, a leading ``v`` removed (``v20.1.0`` -> ``20.1.0``).
    * ``string``, ``path``: the text as is, minus one trailing newline.
    * ``enum``: the stripped text (the caller checks it against the choices).
    * ``list``: a JSON array of scalars if the text starts with ``[``; otherwise one item per
      line if there is more than one line, else comma-separated. Items are stripped and
      empty items dropped.

    The result is still type-checked by :func:`statewise.values.check_value` afterwards.
    """
    vt = ValueType(value_type)
    if vt is ValueType.BOOL:
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text.strip()[:80]!r}")
        return lowered == "true"
    if vt is ValueType.INT:
        if not _INT.match(text.strip()):
            raise ValueError(f"expected an integer, got {text.strip()[:80]!r}")
        return int(text.strip())
    if vt is ValueType.VERSION:
        return normalize_version(text)
    if vt is ValueType.ENUM:
        return text.strip()
    if vt is ValueType.LIST:
        stripped = text.strip()
        if stripped.startswith("["):
            try:
                items = json.loads(stripped)
            except json.JSONDecodeError as error:
                raise ValueError(f"looks like a JSON array but does not parse: {error}") from None
            return coerce_native(items, vt, choices)
        parts = stripped.splitlines() if "\n" in stripped else stripped.split(",")
        return [part.strip() for part in parts if part.strip()]
    return text[:-1] if text.endswith("\n") else text


def render_scalar(value: Any) -> str:
    """A native scalar as text: ``true``/``false``, numbers as written, strings as is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if hasattr(value, "isoformat"):  # TOML and YAML dates and times
        return str(value.isoformat())
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def coerce_native(value: Any, value_type: ValueType, choices: Sequence[str] | None = None) -> Any:
    """Turn a value read from structured data (JSON, TOML, YAML, INI) into ``value_type``.

    Strings are kept as they are for ``string`` and ``path`` keys and otherwise go through
    :func:`parse_text_value`. Native booleans are bools, native integers
    are ints; for ``string`` keys any scalar is rendered (``true``, ``3``) and mappings or
    arrays become compact JSON. For ``list`` keys an array of scalars becomes a list of
    rendered strings. A float is never a version (``3.10`` would read back as ``3.1``), and
    null is never a value: both raise ValueError.
    """
    vt = ValueType(value_type)
    if value is None:
        raise ValueError("the value is null")
    if isinstance(value, str):
        if vt in (ValueType.STRING, ValueType.PATH):
            return value  # structured data holds the exact text
        return parse_text_value(value, vt, choices)
    if vt is ValueType.BOOL:
        if isinstance(value, bool):
            return value
        raise ValueError(f"expected a boolean, got {value!r}")
    if vt is ValueType.INT:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ValueError(f"expected an integer, got {value!r}")
    if vt is ValueType.LIST:
        if isinstance(value, (list, tuple)):
            items = []
            for item in value:
                if isinstance(item, (dict, list, tuple)) or item is None:
                    raise ValueError(f"a list of scalars is expected; it contains {item!r}")
                items.append(render_scalar(item))
            return items
        raise ValueError(f"expected a list, got {value!r}")
    if vt is ValueType.STRING:
        if isinstance(value, (dict, list, tuple)):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=render_scalar)
        return render_scalar(value)
    if vt is ValueType.VERSION:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise ValueError(f"a version must be text, got {value!r}")
    raise ValueError(f"expected text for a {vt} value, got {value!r}")


def find_version(text: str) -> str | None:
    """The first version number in ``text`` (``Python 3.11.7`` -> ``3.11.7``), or None."""
    match = _VERSION_IN_TEXT.search(text)
    return match.group(1) if match else None


def within(path: str, root: str) -> bool:
    """Lexically: is ``path`` at or below ``root``? (both absolute)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return root == "/" or path == root or path.startswith(root + "/")
