"""Interface contracts: the declarative file that adapts the core to repositories and tools.

A contract declares

* ``state``: every record key the store accepts, with its value type, the scope level its
  facts normally live at, who has authority over it (a machine verifier, a developer, the
  agent), its freshness TTL and, for machine facts, the verifier that observes it;
* ``operations``: every side-effecting tool operation, with typed slots, the state keys each
  slot may depend on, the keys the operation is linked to by policy, its risk class and
  whether it needs approval;
* ``invariants``: hard safety rules written in CEL over ``action`` and ``state``;
* ``verifiers``: named verifier bindings (an adapter plus its arguments);
* ``scopes``: where a task's user, workspace, repository and branch come from.

Loading validates everything up front and either returns a complete :class:`Contract` or
raises :class:`~statewise.errors.ContractError` naming the file, the field path and what was
expected. Nothing is ever half-loaded. The core never mentions git or Python: everything
domain-specific lives in contract files such as the built-in ``coding`` contract.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import fnmatch
import functools
import hashlib
import os
import pickle
import posixpath
import re
import string
import sys
import threading
import time
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from statewise.errors import ContractError, StateWiseError
from statewise.expressions import (
    Activation,
    Expression,
    ExpressionError,
    ExpressionTimeout,
    compile_expression,
    equality_constraint,
    state_keys_read,
)
from statewise.records import Authority, KeyType, base_key, check_key
from statewise.scopes import ScopeLevel
from statewise.values import ValueType, check_value

if typing.TYPE_CHECKING:
    import yaml  # imported on first use at run time (see _loaders); named here for annotations

__all__ = [
    "ARG_PLACEHOLDERS",
    "INVARIANT_TIME_BUDGET",
    "MAX_CONTRACT_ALIASES",
    "MAX_CONTRACT_BYTES",
    "MAX_CONTRACT_DEPTH",
    "MAX_CONTRACT_NODES",
    "QUESTION_PLACEHOLDERS",
    "REGEX_TIMEOUT_SECONDS",
    "CommandFlag",
    "CommandRule",
    "Contract",
    "InvariantResult",
    "InvariantSpec",
    "MemoryImplication",
    "MemoryRule",
    "MemorySpec",
    "ObservationRule",
    "OperationSpec",
    "ReadSpec",
    "RegexTimeout",
    "Risk",
    "ScopeSources",
    "SlotSpec",
    "StateSpec",
    "VerifierSpec",
    "builtin_contract",
    "cache_directory",
    "contract_regex",
    "format_duration",
    "list_builtin_contracts",
    "load_contract",
    "load_contract_text",
    "parse_duration",
    "render_template",
    "render_verifier",
    "summarize",
]

# Placeholders a verifier argument may contain; the verifier registry fills them in for the
# task at hand. A closed set, so a typo is a load error rather than a verifier that silently
# receives "{brnach}".
ARG_PLACEHOLDERS = frozenset({"qualifier", "branch", "repo", "workspace", "user"})
# Placeholders a clarification question template may contain.
QUESTION_PLACEHOLDERS = frozenset({"key", "qualifier", "scope", "value"})
DEFAULT_QUESTION = "Is {key} = {value} still right for {scope}? If not, what is the current value?"

COMMAND_ADAPTER = "command"
#: Seconds all invariant evaluations of one check_invariants call may take together, when
#: the caller gives no deadline of its own.
INVARIANT_TIME_BUDGET = 3.0
_MAX_TIMEOUT_SECONDS = 600
# Programs that would turn "-c <string>" back into a shell command line.
_SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "ash", "fish", "csh", "tcsh", "rc", "es", "xonsh",
     "nu", "elvish", "cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh", "pwsh.exe"}
)
# Shell options that take the next argument as their value (bash -o pipefail script.sh).
_SHELL_VALUED_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Wrappers that run the rest of their argv as a command: (options that take a value, positional
# arguments before the command). A verifier's argv is checked after peeling them, so
# ``[env, sh, -c, ...]`` is refused like ``[sh, -c, ...]``.
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-a", "--argv0"}), 0),
    "sudo": (frozenset({"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from",
                        "-D", "--chdir", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T",
                        "--command-timeout", "-R", "--chroot"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "command": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "builtin": (frozenset(), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset({"-c", "--cpu-list"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "xargs": (frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "--eof", "-I", "--replace", "-L",
                         "--max-lines", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars",
                         "--process-slot-var"}), 0),
    "busybox": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "firejail": (frozenset(), 0),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
}
# Wrappers (or wrapper options) that take a command line as one string: always refused.
_STRING_RUNNERS = {
    "env": frozenset({"-S", "--split-string"}),
    "sudo": frozenset({"-s", "--shell", "-i", "--login"}),
    "doas": frozenset({"-s"}),
    "flock": frozenset({"-c", "--command"}),
    "su": None,  # su -c STRING, or a login shell: never a verifier
    "runuser": None,
    "watch": None,  # runs its arguments through sh -c
    "script": None,
    "ssh": None,
    "eval": None,
    "source": None,
    ".": None,
}


def _shell_string_problem(argv: tuple[str, ...]) -> str | None:
    """Why ``argv`` runs a shell string (after peeling wrappers), or None if it does not."""
    index = 0
    wrappers: list[str] = []
    while index < len(argv):
        program = posixpath.basename(argv[index])
        lowered = program.lower()
        if lowered in _SHELLS:
            shown = " ".join(wrappers + [program])
            for item in argv[index + 1 :]:
                if _is_command_option(lowered, item):
                    return f"{shown} {item} runs a shell string; give the command's own argv instead"
            # Conservative on purpose: a string option anywhere above is refused; here, a shell
            # with no script operand (or told -s/-i) reads its commands from its input.
            position = index + 1
            while position < len(argv) and argv[position].startswith(("-", "+")) and argv[position] != "--":
                if argv[position] in ("-s", "-i"):
                    return f"{shown} {argv[position]} reads commands from its input; give the command's own argv"
                position += 2 if argv[position] in _SHELL_VALUED_OPTIONS else 1
            if position < len(argv) and argv[position] == "--":
                position += 1
            if position >= len(argv):
                return f"{shown} reads commands from its input; give the command's own argv instead"
            return None
        if lowered in _STRING_RUNNERS and lowered not in _WRAPPERS:
            return (f"{' '.join(wrappers + [program])} runs a command line given as a string; "
                    "give the command's own argv")
        spec = _WRAPPERS.get(lowered)
        if spec is None:
            return None
        valued, positionals = spec
        refused = _STRING_RUNNERS.get(lowered) or frozenset()
        wrappers.append(program)
        index += 1
        if lowered == "busybox":
            continue  # the next argument is the applet
        remaining = positionals
        while index < len(argv):
            item = argv[index]
            name = item.split("=", 1)[0]
            if name in refused or (item.startswith("-") and not item.startswith("--") and
                                   any(f"-{ch}" in refused for ch in item[1:])):
                return f"{' '.join(wrappers)} {item} runs a command line given as a string; give the command's own argv"
            if item == "--":
                index += 1
                break
            if lowered == "env" and "=" in item and not item.startswith("-"):
                index += 1  # NAME=VALUE
                continue
            if lowered == "nice" and re.fullmatch(r"-\d+", item):
                index += 1
                continue
            if item in valued:
                index += 2
                continue
            if item.startswith("-") and item != "-":
                index += 1
                continue
            if remaining:  # the wrapper's own operands (a duration, a lock file); options may follow
                remaining -= 1
                index += 1
                continue
            break
    return None


def _is_command_option(shell: str, item: str) -> bool:
    """Whether ``item`` makes ``shell`` run a string: ``-c``, ``-lc``, ``--command``, ``/c``, ``-Command``..."""
    lowered = item.lower()
    if shell.startswith("cmd"):
        return lowered in ("/c", "/k", "/r")
    if shell.startswith(("powershell", "pwsh")):
        name = lowered.lstrip("-/")
        return len(lowered) > 1 and bool(name) and (
            "command".startswith(name) or "encodedcommand".startswith(name) or name in ("ec", "e")
        )
    if lowered == "--command" or lowered.startswith("--command="):
        return True
    return bool(re.fullmatch(r"[-+][A-Za-z]*c[A-Za-z]*", item))


# --- regular expressions -----------------------------------------------------------------
# A contract's patterns (verifier reads, observation rules) run on command output the
# contract's author does not control. They are compiled with the `regex` package, whose
# matching takes a timeout: a pathological pattern is cut off instead of blocking the hook.

#: Time bound of one match of a contract pattern.
REGEX_TIMEOUT_SECONDS = 0.25


class RegexTimeout(StateWiseError, TimeoutError):
    """A contract pattern did not finish matching within its time bound (no answer, not "no match")."""


@dataclass(frozen=True, slots=True)
class ContractPattern:
    """A compiled contract pattern whose searches are time-bounded."""

    pattern: str
    compiled: Any

    @property
    def groups(self) -> int:
        return self.compiled.groups

    def search(self, text: str, *, timeout: float = REGEX_TIMEOUT_SECONDS) -> Any:
        """The first match in ``text`` or None; RegexTimeout past ``timeout`` seconds."""
        try:
            return self.compiled.search(text, timeout=timeout)
        except TimeoutError:
            raise RegexTimeout(
                f"the pattern {self.pattern!r} did not finish matching within {timeout}s"
            ) from None

    def finditer(self, text: str, *, timeout: float = REGEX_TIMEOUT_SECONDS) -> list[Any]:
        """Every match in ``text``; RegexTimeout when all of them take past ``timeout`` seconds."""
        try:
            return list(self.compiled.finditer(text, timeout=timeout))
        except TimeoutError:
            raise RegexTimeout(
                f"the pattern {self.pattern!r} did not finish matching within {timeout}s"
            ) from None


@functools.lru_cache(maxsize=256)
def contract_regex(pattern: str, *, multiline: bool = False) -> ContractPattern:
    """Compile a contract pattern (ValueError if it is not valid) for time-bounded searches."""
    import regex  # noqa: PLC0415 - only processes that match contract patterns need it

    try:
        compiled = regex.compile(pattern, regex.MULTILINE if multiline else 0)
    except (regex.error, TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"not a valid regular expression: {error}") from None
    return ContractPattern(pattern, compiled)


_NAME_PATTERNS = {
    "contract": (re.compile(r"^[a-z0-9][a-z0-9_.-]*$"), "lower-case letters, digits, '.', '_' or '-'"),
    "operation": (
        re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"),
        "dotted lower-case words such as git.push or stop",
    ),
    "tool": (re.compile(r"^[a-z][a-z0-9_-]*$"), "a lower-case word such as git, pip or fs"),
    "slot": (re.compile(r"^[a-z][a-z0-9_]*$"), "a lower-case identifier such as branch or force"),
    "invariant": (re.compile(r"^[a-z][a-z0-9_]*$"), "a lower-case identifier such as no_force_push"),
    "binding": (
        re.compile(r"^[a-z][a-z0-9_]*([.-][a-z0-9_]+)*$"),
        "lower-case words joined by '.', '_' or '-', such as node_version or git.protection",
    ),
    "adapter": (
        re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"),
        "a registered adapter name such as git.current_branch or command",
    ),
}


class _FieldProblem(ValueError):
    """A problem found by a model-level validator that belongs to one field of that model.

    Pydantic reports model-level errors at the model's location; carrying the field name
    lets the error translation point at ``verifiers.x.argv`` instead of ``verifiers.x``.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field


def _named(kind: str) -> Any:
    pattern, expected = _NAME_PATTERNS[kind]

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not a valid {kind} name; expected {expected}")
        return value

    return AfterValidator(check)


def _enum_label(member: Any, by_label: bool) -> str:
    return member.label if by_label else member.value


def _enum_parser(enum_type: type[enum.Enum], *, by_label: bool = False) -> Any:
    """A before-validator that names every allowed value when the input is not one of them."""

    def labels() -> list[str]:
        return [_enum_label(member, by_label) for member in enum_type]

    def parse(value: Any) -> Any:
        if isinstance(value, enum_type):
            return value
        if isinstance(value, str):
            for member in enum_type:
                if value == _enum_label(member, by_label):
                    return member
        raise ValueError(f"expected one of {', '.join(labels())}; got {value!r}")

    return BeforeValidator(parse)


# --- durations ------------------------------------------------------------------------

_DURATION_UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION = re.compile(r"^(\d+[wdhms])+$")
_DURATION_PART = re.compile(r"(\d+)([wdhms])")


def parse_duration(text: str) -> int:
    """Parse ``"90s"``, ``"30m"``, ``"12h"``, ``"7d"``, ``"2w"`` or ``"1h30m"`` into seconds.

    A string of digits alone is seconds. Raises ValueError for anything else or for zero.
    """
    compact = text.strip().replace(" ", "").lower()
    if compact.isdigit():
        seconds = int(compact)
    elif _DURATION.match(compact):
        seconds = sum(int(n) * _DURATION_UNITS[unit] for n, unit in _DURATION_PART.findall(compact))
    else:
        raise ValueError(
            f"expected a number of seconds or a duration such as 30m, 12h, 7d or 1h30m; got {text!r}"
        )
    if seconds < 1:
        raise ValueError(f"a TTL must be at least one second; got {text!r}")
    return seconds


def format_duration(seconds: int) -> str:
    """The shortest duration string for ``seconds`` (``5400`` -> ``"1h30m"``); inverse of parse."""
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 1:
        raise ValueError(f"a duration is a positive number of seconds; got {seconds!r}")
    parts = []
    remaining = seconds
    for unit, size in _DURATION_UNITS.items():
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def _parse_ttl(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"expected seconds (an int >= 1) or a duration such as 30m, 12h, 7d; got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"a TTL must be at least one second; got {value!r}")
        return value
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError(f"expected seconds (an int >= 1) or a duration such as 30m, 12h, 7d; got {value!r}")


# --- templates ------------------------------------------------------------------------


def _template_fields(text: str, allowed: frozenset[str]) -> list[str]:
    """The placeholder names in ``text``; ValueError if one is unknown or malformed."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        raise ValueError(f"{text!r}: {error}; write {{{{ and }}}} for literal braces") from None
    names = []
    for _literal, field_name, format_spec, conversion in parsed:
        if field_name is None:
            continue
        if field_name not in allowed or format_spec or conversion:
            wanted = ", ".join("{" + name + "}" for name in sorted(allowed))
            raise ValueError(
                f"{text!r}: placeholder {{{field_name}}} is not one of {wanted} "
                "(write {{ and }} for literal braces)"
            )
        names.append(field_name)
    return names


def render_template(text: str, values: Mapping[str, str]) -> str:
    """Fill ``{placeholder}`` fields of a contract template; KeyError names a missing value."""
    return string.Formatter().vformat(text, (), values)


# --- models -------------------------------------------------------------------------------


class _Model(BaseModel):
    # defer_build: the validators are built at the first validation, so a process that gets
    # its contract from the compiled cache never pays for building them.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=False, defer_build=True)


class Risk(str, enum.Enum):
    """An operation's risk class, from harmless to irreversible."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return list(Risk).index(self)

    def __str__(self) -> str:
        return self.value


_TypeField = Annotated[ValueType, _enum_parser(ValueType)]
_Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
_ArgValue = _Scalar | tuple[_Scalar, ...]
_NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]

_JSON_PATH = re.compile(r'^\$(\.[A-Za-z_][A-Za-z0-9_-]*|\[\d+\]|\["[^"]*"\])+$')


class ReadSpec(_Model):
    """How the ``command`` adapter turns a finished command into a value. Exactly one is set.

    ``exit_status`` maps exit codes to values; ``regex`` is searched in the output (multi-line
    mode) and its single group is the value; ``json_path`` (``$.a.b``, ``$.a[0]``,
    ``$.a["@types/node"]``) selects a value from the output parsed as JSON.
    """

    exit_status: dict[StrictInt, _Scalar] | None = None
    regex: _NonEmptyStr | None = None
    json_path: _NonEmptyStr | None = None

    @field_validator("exit_status")
    @classmethod
    def _some_codes(cls, value: dict[int, Any] | None) -> dict[int, Any] | None:
        if value is not None and not value:
            raise ValueError("map at least one exit code to a value")
        return value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return None
        compiled = contract_regex(value, multiline=True)
        if compiled.groups != 1:
            raise ValueError(
                f"the pattern must have exactly one capturing group (the value); it has {compiled.groups}"
            )
        return value

    @field_validator("json_path")
    @classmethod
    def _simple_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        _template_fields(value, ARG_PLACEHOLDERS)
        opaque = re.sub(r"\{[a-z]+\}", "x", value)
        if not _JSON_PATH.match(opaque):
            raise ValueError(
                f"{value!r} is not a simple JSON path; expected $ followed by .name, [index] "
                'or ["key"] steps, e.g. $.engines.node'
            )
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> ReadSpec:
        given = [name for name in ("exit_status", "regex", "json_path") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of exit_status, regex or json_path"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self

    @property
    def kind(self) -> str:
        return next(name for name in ("exit_status", "regex", "json_path") if getattr(self, name) is not None)


def _reject_shell_string(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError(
            f"argv must be a list of strings, never a shell command line; write e.g. "
            f"{value.split()!r} instead of {value!r}"
        )
    return value


class VerifierSpec(_Model):
    """A verifier binding: which adapter observes a key, with which arguments.

    The ``command`` adapter is the generic declarative verifier: it runs ``argv`` (a list,
    never a shell string) in ``cwd`` with a timeout and reads the value as ``read`` says.
    Every other adapter takes ``args``; argument strings may contain the placeholders in
    :data:`ARG_PLACEHOLDERS`.
    """

    adapter: Annotated[StrictStr, _named("adapter")]
    args: dict[StrictStr, _ArgValue] = {}
    timeout: Annotated[StrictInt | StrictFloat, Field(gt=0, le=_MAX_TIMEOUT_SECONDS)] = 10
    argv: Annotated[tuple[StrictStr, ...] | None, BeforeValidator(_reject_shell_string)] = None
    cwd: StrictStr | None = None
    stream: Literal["stdout", "stderr"] | None = None
    read: ReadSpec | None = None

    @field_validator("args")
    @classmethod
    def _arg_placeholders(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name, argument in value.items():
            for item in argument if isinstance(argument, tuple) else (argument,):
                if isinstance(item, str):
                    try:
                        _template_fields(item, ARG_PLACEHOLDERS)
                    except ValueError as error:
                        raise _FieldProblem(name, str(error)) from None
        return value

    @field_validator("argv")
    @classmethod
    def _argv_is_a_program(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value or not value[0].strip():
            raise ValueError("argv needs at least the program name")
        program = value[0]
        if any(ch.isspace() for ch in program):
            raise ValueError(
                f"argv[0] {program!r} contains whitespace: that is a shell command line, not a program; "
                "split it into a list"
            )
        if "{" in program:
            raise ValueError("argv[0] must be a fixed program name, not a placeholder")
        problem = _shell_string_problem(value)
        if problem is not None:
            raise ValueError(problem)
        for item in value[1:]:
            _template_fields(item, ARG_PLACEHOLDERS)
        return value

    @field_validator("cwd")
    @classmethod
    def _cwd(cls, value: str | None) -> str | None:
        if value is None or value == "workspace":
            return value
        _template_fields(value, ARG_PLACEHOLDERS)
        if not (value.startswith("/") or value.startswith("{workspace}")):
            raise ValueError(
                f"cwd must be 'workspace', an absolute path, or a path under {{workspace}}; got {value!r}"
            )
        return value

    @model_validator(mode="after")
    def _command_rules(self) -> VerifierSpec:
        if self.adapter == COMMAND_ADAPTER:
            if self.argv is None:
                raise _FieldProblem("argv", "required for adapter command (a non-empty list of strings)")
            if self.read is None:
                raise _FieldProblem(
                    "read", "required for adapter command: one of exit_status, regex, json_path"
                )
            if self.args:
                raise _FieldProblem("args", "adapter command takes argv, not args")
        else:
            for field in ("argv", "cwd", "stream", "read"):
                if getattr(self, field) is not None:
                    raise _FieldProblem(
                        field, f"only adapter command takes {field}; adapter {self.adapter} takes args"
                    )
        return self

    @property
    def working_directory(self) -> str | None:
        """For the command adapter: where it runs (``workspace`` unless ``cwd`` says otherwise)."""
        if self.adapter != COMMAND_ADAPTER:
            return None
        return self.cwd or "workspace"

    def placeholders(self) -> set[str]:
        """Every placeholder this binding uses."""
        texts: list[str] = []
        for argument in self.args.values():
            items = argument if isinstance(argument, tuple) else (argument,)
            texts.extend(item for item in items if isinstance(item, str))
        texts.extend(self.argv or ())
        texts.extend(t for t in (self.cwd, self.read.json_path if self.read else None) if t)
        return {name for text in texts for name in _template_fields(text, ARG_PLACEHOLDERS)}


def _verifier_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "<binding name>"
    if isinstance(value, (Mapping, VerifierSpec)):
        return "<inline verifier>"
    return None


_VerifierRef = Annotated[
    Annotated[Annotated[StrictStr, _named("binding")], Tag("<binding name>")]
    | Annotated[VerifierSpec, Tag("<inline verifier>")],
    Discriminator(
        _verifier_tag,
        custom_error_type="verifier_reference",
        custom_error_message="expected the name of a verifier binding or an inline {adapter: ..., args: ...}",
    ),
]
_DISCRIMINATOR_TAGS = frozenset({"<binding name>", "<inline verifier>"})


def _check_state_key_name(value: str) -> str:
    try:
        check_key(value)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a valid key name; expected dotted lower-case words such as "
            "repository.protected"
        ) from None
    if "[" in value:
        raise ValueError(
            f"{value!r}: declare the base key ({base_key(value)}) with qualified: true; "
            "records then use key[qualifier]"
        )
    return value


class StateSpec(_Model):
    """What a contract declares about one state key."""

    value_type: _TypeField = Field(alias="type")
    choices: tuple[_NonEmptyStr, ...] | None = None
    scope: Annotated[ScopeLevel, _enum_parser(ScopeLevel, by_label=True)]
    authority: Annotated[Authority, _enum_parser(Authority)]
    verifier: _VerifierRef | None = None
    ttl_seconds: Annotated[int | None, BeforeValidator(_parse_ttl)] = Field(default=None, alias="ttl")
    single_valued: StrictBool = True
    qualified: StrictBool = False
    description: StrictStr = ""
    question: _NonEmptyStr | None = None

    @field_validator("question")
    @classmethod
    def _question_placeholders(cls, value: str | None) -> str | None:
        if value is not None:
            _template_fields(value, QUESTION_PLACEHOLDERS)
        return value

    @property
    def key_type(self) -> KeyType:
        return KeyType(value_type=self.value_type, choices=self.choices, ttl_seconds=self.ttl_seconds)


class SlotSpec(_Model):
    """One typed argument of an operation, and the state keys its value may depend on.

    ``qualifier: true`` says the slot's value is the qualifier of the qualified keys it
    depends on (``pip.install``'s ``package`` slot qualifies ``python.package_version``), so
    ``python.package_version[requests]`` binds to an install of ``requests`` only.
    """

    value_type: _TypeField = Field(alias="type")
    choices: tuple[_NonEmptyStr, ...] | None = None
    required: StrictBool = False
    depends_on: tuple[StrictStr, ...] = ()
    qualifier: StrictBool = False
    description: StrictStr = ""


class OperationSpec(_Model):
    """A side-effecting (or, for ``stop``, harmless) tool operation."""

    tool: Annotated[StrictStr, _named("tool")]
    description: StrictStr = ""
    slots: dict[Annotated[StrictStr, _named("slot")], SlotSpec] = {}
    risk: Annotated[Risk, _enum_parser(Risk)]
    requires_approval: StrictBool = False
    side_effects: StrictBool = True
    links: tuple[StrictStr, ...] = ()


class CommandFlag(_Model):
    """One option a declared command accepts (``commands.<rule>.flags``).

    ``value: true``: the option takes a value (``-var-file x`` or ``-var-file=x``). ``slot``:
    the operation slot it fills (the value, or ``true`` for a flag without one); ``repeat:
    true`` collects every occurrence into a list. An option with no slot is accepted and
    recorded nowhere.
    """

    value: StrictBool = False
    slot: StrictStr | None = None
    repeat: StrictBool = False


class CommandRule(_Model):
    """A declarative shell-command rule: a command line the normalizer maps to an operation.

    ``program`` is a bare program name (matched on the basename of what runs:
    ``terraform``, ``/usr/bin/terraform``) or a path with a ``/`` (``./deploy.sh``), which is
    relative to the workspace and matched on the resolved file. ``subcommand`` lists the words
    that must follow the program, in order. ``flags`` are the only options accepted (any
    other option leaves the command unresolved). ``positionals`` name the slots the remaining
    arguments fill, in order (more arguments than names: unresolved; ``rest`` names a list
    slot that takes the surplus instead). ``env`` maps environment variables the command sees
    to slots; ``slots`` gives fixed slot values. ``risk`` overrides the operation's risk.

    For tools whose options do not change what is affected (test runners, migration tools):
    ``options: any`` accepts options the rule does not declare (a declared one still fills its
    slot), and the subcommand is then matched on the words that are not options. A subcommand
    word may list alternatives (``upgrade|downgrade``) and end in ``*`` (``db:*``);
    ``anywhere: true`` matches a one-word subcommand at any such position (``goose postgres
    dsn up``). ``unless`` lists subcommands that make the rule not apply (``db:version``),
    ``when_any`` words of which one must be present. ``read_only: true`` (with no operation)
    declares the matched command read-only: it yields no action.
    """

    program: _NonEmptyStr
    subcommand: tuple[_NonEmptyStr, ...] = ()
    operation: Annotated[StrictStr, _named("operation")] | None = None
    options: Literal["declared", "any"] = "declared"
    anywhere: StrictBool = False
    unless: tuple[tuple[_NonEmptyStr, ...], ...] = ()
    when_any: tuple[_NonEmptyStr, ...] = ()
    read_only: StrictBool = False
    flags: dict[_NonEmptyStr, CommandFlag] = {}
    positionals: tuple[StrictStr, ...] = ()
    rest: StrictStr | None = None
    env: dict[_NonEmptyStr, StrictStr] = {}
    slots: dict[StrictStr, _Scalar] = {}
    risk: Annotated[Risk, _enum_parser(Risk)] | None = None
    description: StrictStr = ""

    def slot_names(self) -> list[tuple[str, str]]:
        """Every slot the rule fills, with where it is named (for the contract's checks)."""
        named = [(f"flags.{flag}.slot", spec.slot) for flag, spec in self.flags.items() if spec.slot]
        named += [(f"positionals[{i}]", slot) for i, slot in enumerate(self.positionals)]
        named += [("rest", self.rest)] if self.rest else []
        named += [(f"env.{var}", slot) for var, slot in self.env.items()]
        named += [(f"slots.{slot}", slot) for slot in self.slots]
        return [(where, slot) for where, slot in named if slot is not None]


class InvariantSpec(_Model):
    """A hard safety rule: whenever ``when`` holds, ``check`` must hold. Both are CEL."""

    name: Annotated[StrictStr, _named("invariant")]
    when: _NonEmptyStr = "true"
    check: _NonEmptyStr
    message: _NonEmptyStr


_SCOPE_SOURCE_FORMS = {
    "user": (re.compile(r"^env:[A-Za-z_][A-Za-z0-9_]*$"), "env:<VARIABLE>"),
    "workspace": (
        re.compile(r"^(cwd|git:toplevel|env:[A-Za-z_][A-Za-z0-9_]*)$"),
        "cwd, git:toplevel or env:<VARIABLE>",
    ),
    "repo": (
        re.compile(r"^(git:toplevel|git:remote\.[A-Za-z0-9._-]+\.url|env:[A-Za-z_][A-Za-z0-9_]*)$"),
        "git:remote.<name>.url, git:toplevel or env:<VARIABLE>",
    ),
    "branch": (re.compile(r"^(git:branch|env:[A-Za-z_][A-Za-z0-9_]*)$"), "git:branch or env:<VARIABLE>"),
}


def _sources(level: str) -> Any:
    pattern, expected = _SCOPE_SOURCE_FORMS[level]

    def parse(value: Any) -> Any:
        items = (value,) if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items:
            raise ValueError(f"expected a source or a non-empty list of sources ({expected})")
        for item in items:
            if not isinstance(item, str) or not pattern.match(item):
                raise ValueError(f"expected {expected}; got {item!r}")
        return tuple(items)

    return BeforeValidator(parse)


class ScopeSources(_Model):
    """Where each part of a task's scope comes from; a list is tried in order.

    The levels nest as ``global < user < workspace < repo < branch`` (see
    :mod:`statewise.scopes`); this section only says how to observe each one.
    """

    user: Annotated[tuple[str, ...], _sources("user")] = ("env:USER",)
    workspace: Annotated[tuple[str, ...], _sources("workspace")] = ("cwd",)
    repo: Annotated[tuple[str, ...], _sources("repo")] = ("git:remote.origin.url", "git:toplevel")
    branch: Annotated[tuple[str, ...], _sources("branch")] = ("git:branch",)


def _compiles(value: str) -> str:
    contract_regex(value)
    return value


class ObservationRule(_Model):
    """A fact a finished shell command reveals: when the command matches ``command`` and its
    output matches ``output``, ``key`` takes ``value`` (or the ``value`` group of ``output``).

    Named groups of both patterns fill ``{name}`` placeholders in ``key`` (a qualifier); a
    ``branch`` group places a branch-level fact on that branch.
    """

    name: Annotated[StrictStr, _named("invariant")]
    description: StrictStr = ""
    command: Annotated[_NonEmptyStr, AfterValidator(_compiles)]
    output: Annotated[_NonEmptyStr, AfterValidator(_compiles)]
    key: _NonEmptyStr
    value: StrictBool | StrictInt | StrictStr | list[StrictStr] | None = None


class MemoryRule(_Model):
    """One extraction rule of the ``memory:`` section: a pattern bound to a record key.

    ``line`` matches a whole line of a memory file; ``code`` matches each code span and each
    line of a fenced block; ``heading`` (optional) limits the rule to lines under a heading
    that matches it. The ``value`` named group (or the fixed ``value``) is the record's
    value; other named groups fill ``{placeholders}`` in ``key`` (a ``branch`` group places
    a branch-level fact on that branch). See docs/memory.md.
    """

    name: Annotated[StrictStr, _named("invariant")]
    description: StrictStr = ""
    heading: Annotated[_NonEmptyStr, AfterValidator(_compiles)] | None = None
    line: Annotated[_NonEmptyStr, AfterValidator(_compiles)] | None = None
    code: Annotated[_NonEmptyStr, AfterValidator(_compiles)] | None = None
    key: _NonEmptyStr
    value: StrictBool | StrictInt | StrictStr | list[StrictStr] | None = None

    @model_validator(mode="after")
    def _one_pattern(self) -> MemoryRule:
        if (self.line is None) == (self.code is None):
            raise ValueError("a memory rule needs exactly one of line or code")
        return self


class MemoryImplication(_Model):
    """What a command in a memory file claims about the workspace: when the command matches
    ``command``, ``key`` (its named groups filled in) should have ``value``."""

    name: Annotated[StrictStr, _named("invariant")]
    description: StrictStr = ""
    command: Annotated[_NonEmptyStr, AfterValidator(_compiles)]
    key: _NonEmptyStr
    value: StrictBool | StrictInt | StrictStr | list[StrictStr]


class MemorySpec(_Model):
    """How agents' memory files (CLAUDE.md, AGENTS.md, GEMINI.md, ...) become records."""

    rules: tuple[MemoryRule, ...] = ()
    implies: tuple[MemoryImplication, ...] = ()
    note_key: _NonEmptyStr | None = None  # where a line that no rule types is kept, as text
    # A verifier that proposes the correct value when a memory fact of that key is found
    # defective (e.g. the test command the repository itself declares).
    corrections: dict[StrictStr, VerifierSpec] = {}


class _ContractDocument(_Model):
    """One contract file as written (before merging with what it extends)."""

    name: Annotated[StrictStr, _named("contract")]
    version: Annotated[StrictInt, Field(ge=1)]
    description: StrictStr = ""
    extends: _NonEmptyStr | None = None
    state: dict[Annotated[StrictStr, AfterValidator(_check_state_key_name)], StateSpec] = {}
    operations: dict[Annotated[StrictStr, _named("operation")], OperationSpec] = {}
    invariants: tuple[InvariantSpec, ...] = ()
    verifiers: dict[Annotated[StrictStr, _named("binding")], VerifierSpec] = {}
    scopes: ScopeSources | None = None
    observations: tuple[ObservationRule, ...] = ()
    memory: MemorySpec | None = None
    commands: dict[Annotated[StrictStr, _named("binding")], CommandRule] = {}


# --- CEL ------------------------------------------------------------------------------------
# Expressions are compiled and evaluated by statewise.expressions (the only module that knows
# the CEL engine). This section supplies the contract's variables and functions.


def _cel_path_within(path: Any, root: Any) -> bool:
    """path_within(path, root): both absolute; true when path is root or below it (lexically)."""
    if not isinstance(path, str) or not isinstance(root, str):
        raise TypeError("path_within(path, root) needs two strings")
    if not path.startswith("/") or not root.startswith("/"):
        raise ValueError(f"path_within needs absolute paths; got {path!r} and {root!r}")
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return root == "/" or path == root or path.startswith(root + "/")


def _cel_path_resolve(base: Any, path: Any) -> str:
    """path_resolve(base, path): ``path`` made absolute against ``base`` and normalized."""
    if not isinstance(base, str) or not isinstance(path, str):
        raise TypeError("path_resolve(base, path) needs two strings")
    if not base.startswith("/"):
        raise ValueError(f"path_resolve needs an absolute base; got {base!r}")
    if not path:
        raise ValueError("path_resolve got an empty path")
    joined = path if path.startswith("/") else posixpath.join(base, path)
    return posixpath.normpath(joined)


def _cel_glob_match(text: Any, pattern: Any) -> bool:
    """glob_match(text, pattern): shell-style match (``*``, ``?``, ``[...]``; ``*`` crosses ``/``)."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("glob_match(text, pattern) needs two strings")
    return fnmatch.fnmatchcase(text, pattern)


_CEL_FUNCTIONS = types.MappingProxyType(
    {
        "path_within": _cel_path_within,
        "path_resolve": _cel_path_resolve,
        "glob_match": _cel_glob_match,
    }
)
_CEL_VARIABLES = frozenset({"action", "state"})
# The path the operation pre-filter looks for in an invariant's `when`.
_OPERATION_PATH = ("action", "operation")


class _LazyExpression:
    """A CEL expression compiled at its first use.

    A contract read from the compiled cache was validated (every expression compiled) when
    the cache entry was written, so its expressions are compiled only when an invariant is
    first evaluated: a hook that never evaluates one never imports the CEL engine. A
    compile failure then (a different engine build) is an evaluation error: the invariant
    does not hold.
    """

    __slots__ = ("_expression", "_lock", "text")

    def __init__(self, text: str, expression: Expression | None = None) -> None:
        self.text = text
        self._expression = expression
        self._lock = threading.Lock()

    def get(self) -> Expression:
        if self._expression is None:
            with self._lock:
                if self._expression is None:
                    self._expression = compile_expression(
                        self.text, variables=_CEL_VARIABLES, functions=_CEL_FUNCTIONS
                    )
        return self._expression


@dataclass(frozen=True, slots=True)
class _CompiledInvariant:
    spec: InvariantSpec
    when: _LazyExpression
    check: _LazyExpression
    # The operations `when` requires at its top level (`action.operation == "x" && ...`), or
    # None if it requires none: for any other operation `when` is false without evaluating.
    operations: frozenset[str] | None
    keys: tuple[str, ...]  # the state keys read as state["k"] in when and check


# What the static readers found in an expression's text, memoized: filled from the compiled
# cache so that a process that loads from it never runs the tokenizer.
_TEXT_ANALYSIS: dict[str, tuple[tuple[str, ...], frozenset[str] | None]] = {}


def _analysis(text: str) -> tuple[tuple[str, ...], frozenset[str] | None]:
    """(the state keys ``text`` reads, the operations it requires at its top level)."""
    found = _TEXT_ANALYSIS.get(text)
    if found is None:
        found = (tuple(state_keys_read(text)), equality_constraint(text, _OPERATION_PATH))
        _TEXT_ANALYSIS[text] = found
    return found


def _compile_cel(
    text: str, source: str, field: str, declared: Mapping[str, StateSpec], *, validated: bool = False
) -> _LazyExpression:
    expression = None
    if not validated:
        try:
            expression = compile_expression(text, variables=_CEL_VARIABLES, functions=_CEL_FUNCTIONS)
        except ExpressionError as error:
            raise ContractError(source, field, f"not a valid CEL expression: {error}") from None
    # A misspelt key would be missing at every evaluation, so the rule would block every
    # action it applies to; say so now instead.
    for key in _analysis(text)[0]:
        spec = declared.get(base_key(key))
        if spec is None:
            raise ContractError(
                source, field, f"reads state[{key!r}], which is not a key declared under state"
            )
        if spec.qualified != ("[" in key):
            need = "needs a [qualifier]" if spec.qualified else "is not qualified: true"
            raise ContractError(source, field, f"reads state[{key!r}], but {base_key(key)} {need}")
    return _LazyExpression(text, expression)


def _compile_invariant(
    invariant: InvariantSpec,
    source: str,
    index: int,
    declared: Mapping[str, StateSpec],
    validated: frozenset[str] = frozenset(),
) -> _CompiledInvariant:
    when = _compile_cel(invariant.when, source, f"invariants[{index}].when", declared,
                        validated=invariant.when in validated)
    check = _compile_cel(invariant.check, source, f"invariants[{index}].check", declared,
                         validated=invariant.check in validated)
    keys = _analysis(invariant.when)[0] + _analysis(invariant.check)[0]
    return _CompiledInvariant(
        spec=invariant,
        when=when,
        check=check,
        operations=_analysis(invariant.when)[1],
        keys=tuple(dict.fromkeys(keys)),
    )


class _NotRepresentable(TypeError):
    pass


_INT64 = (-(2**63), 2**63 - 1)


def _to_cel_data(value: Any, where: str) -> Any:
    """Plain JSON-like data for CEL; enums, paths, tuples and sets are unwrapped."""
    if value is None or isinstance(value, (bool, str, float)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, int):
        number = value.value if isinstance(value, enum.Enum) else value
        if not _INT64[0] <= number <= _INT64[1]:
            raise _NotRepresentable(f"{where} is an int outside CEL's 64-bit range")
        return number
    if isinstance(value, enum.Enum):
        return _to_cel_data(value.value, where)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _to_cel_data(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_cel_data(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return sorted(_to_cel_data(v, where) for v in value)
    raise _NotRepresentable(f"{where} is a {type(value).__name__}, which invariants cannot read")


def _action_data(action: Any) -> Mapping[str, Any]:
    if isinstance(action, Mapping):
        return action
    if isinstance(action, BaseModel):
        return action.model_dump(mode="json")
    if dataclasses.is_dataclass(action) and not isinstance(action, type):
        return dataclasses.asdict(action)
    raise TypeError(f"action must be a mapping or an Action model, not {type(action).__name__}")


@dataclass(frozen=True, slots=True)
class InvariantResult:
    """The outcome of one invariant for one action.

    ``holds`` is False when the check evaluated to false *or* could not be evaluated (fail
    closed); ``error`` then carries the evaluation error and the result is *unresolved*.
    That includes an evaluation stopped at its time bound (``timed_out``): its value is
    unknown, so the invariant never holds. ``applies`` is False when ``when`` evaluated to
    false, in which case ``holds`` is True.
    """

    name: str
    holds: bool
    message: str
    error: str | None = None
    applies: bool = True
    timed_out: bool = False

    @property
    def unresolved(self) -> bool:
        """True when the invariant could not be evaluated (an error or the time bound)."""
        return self.error is not None


# --- the contract ---------------------------------------------------------------------------


def _spec_difference(old: BaseModel, new: BaseModel) -> str:
    old_data, new_data = old.model_dump(by_alias=True), new.model_dump(by_alias=True)
    fields = [name for name in old_data if old_data[name] != new_data.get(name)]
    return ", ".join(f"{name}: {old_data[name]!r} -> {new_data[name]!r}" for name in fields)[:400]


@dataclass(frozen=True)
class _Parts:
    state: dict[str, StateSpec]
    operations: dict[str, OperationSpec]
    invariants: list[InvariantSpec]
    verifiers: dict[str, VerifierSpec]
    scopes: ScopeSources | None
    observations: list[ObservationRule] = dataclasses.field(default_factory=list)
    memory: MemorySpec | None = None
    commands: dict[str, CommandRule] = dataclasses.field(default_factory=dict)


def _merge_memory(base: MemorySpec | None, addition: MemorySpec | None, base_source: str,
                  source: str) -> MemorySpec | None:
    """The base's memory rules plus the addition's; a rule redefined differently is an error."""
    if base is None or addition is None:
        return addition if base is None else base
    merged: dict[str, dict[str, Any]] = {"rules": {}, "implies": {}}
    for section in ("rules", "implies"):
        for rule in (*getattr(base, section), *getattr(addition, section)):
            known = merged[section].get(rule.name)
            if known is not None and known != rule:
                raise ContractError(source, f"memory.{section}",
                                    f"redefines {rule.name!r} differently from {base_source}")
            merged[section][rule.name] = rule
    return MemorySpec(rules=tuple(merged["rules"].values()), implies=tuple(merged["implies"].values()),
                      note_key=addition.note_key or base.note_key,
                      corrections={**base.corrections, **addition.corrections})


def _merge(base: _Parts, base_source: str, addition: _Parts, source: str) -> _Parts:
    """``base`` plus ``addition``; redefining anything differently is a ContractError in ``source``."""
    merged = _Parts(
        state=dict(base.state),
        operations=dict(base.operations),
        invariants=list(base.invariants),
        verifiers=dict(base.verifiers),
        scopes=base.scopes,
        observations=list(base.observations),
        memory=_merge_memory(base.memory, addition.memory, base_source, source),
        commands=dict(base.commands),
    )
    known_rules = {rule.name: rule for rule in merged.observations}
    for index, rule in enumerate(addition.observations):
        if rule.name not in known_rules:
            merged.observations.append(rule)
            known_rules[rule.name] = rule
        elif known_rules[rule.name] != rule:
            raise ContractError(source, f"observations[{index}]",
                                f"redefines observation {rule.name!r} differently from {base_source}")
    sections: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
        ("state", "state key", merged.state, addition.state),
        ("operations", "operation", merged.operations, addition.operations),
        ("verifiers", "verifier binding", merged.verifiers, addition.verifiers),
        ("commands", "command rule", merged.commands, addition.commands),
    ]
    for section, noun, target, extra in sections:
        for name, spec in extra.items():
            existing = target.get(name)
            if existing is not None and existing != spec:
                raise ContractError(
                    source,
                    f"{section}.{name}",
                    f"redefines {noun} {name!r} differently from {base_source} "
                    f"({_spec_difference(existing, spec)}); choose a new name instead",
                )
            target[name] = spec
    by_name = {invariant.name: invariant for invariant in merged.invariants}
    for index, invariant in enumerate(addition.invariants):
        existing_invariant = by_name.get(invariant.name)
        if existing_invariant is None:
            merged.invariants.append(invariant)
            by_name[invariant.name] = invariant
        elif existing_invariant != invariant:
            raise ContractError(
                source,
                f"invariants[{index}]",
                f"redefines invariant {invariant.name!r} differently from {base_source}; "
                "choose a new name instead",
            )
    if addition.scopes is not None:
        if merged.scopes is not None and merged.scopes != addition.scopes:
            raise ContractError(
                source,
                "scopes",
                f"redefines scopes differently from {base_source} "
                f"({_spec_difference(merged.scopes, addition.scopes)})",
            )
        return dataclasses.replace(merged, scopes=addition.scopes)
    return merged


class Contract:
    """A loaded, fully validated contract. Immutable; build one with :func:`load_contract`.

    Implements :class:`statewise.records.KeySchema`, so a store can use it to type records.
    """

    __slots__ = (
        "_bases", "_commands", "_compiled", "_description", "_invariants", "_memory", "_name", "_observations",
        "_operations",
        "_parts",
        "_scopes", "_source", "_state", "_verifiers", "_version",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("build a Contract with load_contract, load_contract_text or builtin_contract")

    @classmethod
    def _assemble(
        cls,
        *,
        name: str,
        version: int,
        description: str,
        source: str,
        bases: tuple[str, ...],
        parts: _Parts,
        compiled: Mapping[str, _CompiledInvariant] | None = None,
        validated: frozenset[str] = frozenset(),
    ) -> Contract:
        _check_references(parts, source)
        programs: dict[str, _CompiledInvariant] = {}
        seen: set[str] = set()
        for index, invariant in enumerate(parts.invariants):
            if invariant.name in seen:
                raise ContractError(
                    source, f"invariants[{index}].name", f"duplicate invariant name {invariant.name!r}"
                )
            seen.add(invariant.name)
            reusable = (compiled or {}).get(invariant.name)
            if reusable is not None and reusable.spec == invariant:
                programs[invariant.name] = reusable
                continue
            programs[invariant.name] = _compile_invariant(invariant, source, index, parts.state, validated)
        contract = object.__new__(cls)
        setattr_ = object.__setattr__
        setattr_(contract, "_name", name)
        setattr_(contract, "_version", version)
        setattr_(contract, "_description", description)
        setattr_(contract, "_source", source)
        setattr_(contract, "_bases", bases)
        setattr_(contract, "_parts", parts)
        setattr_(contract, "_state", types.MappingProxyType(dict(parts.state)))
        setattr_(contract, "_operations", types.MappingProxyType(dict(parts.operations)))
        setattr_(contract, "_invariants", tuple(parts.invariants))
        setattr_(contract, "_verifiers", types.MappingProxyType(dict(parts.verifiers)))
        setattr_(contract, "_scopes", parts.scopes or ScopeSources())
        setattr_(contract, "_observations", tuple(parts.observations))
        setattr_(contract, "_memory", parts.memory or MemorySpec())
        setattr_(contract, "_commands", types.MappingProxyType(dict(parts.commands)))
        setattr_(contract, "_compiled", programs)
        return contract

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Contract is immutable")

    # Immutable, so copies are the object itself (the default protocol would call __setattr__).
    def __copy__(self) -> Contract:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Contract:
        return self

    def __repr__(self) -> str:
        return (
            f"Contract({self._name!r} v{self._version}, {len(self._state)} keys, "
            f"{len(self._operations)} operations, {len(self._invariants)} invariants)"
        )

    # --- identity --------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int:
        return self._version

    @property
    def description(self) -> str:
        return self._description

    @property
    def source(self) -> str:
        """The file (or label) this contract was loaded from."""
        return self._source

    @property
    def bases(self) -> tuple[str, ...]:
        """Names of the contracts merged underneath this one, innermost first."""
        return self._bases

    # --- sections --------------------------------------------------------------------------

    @property
    def state(self) -> Mapping[str, StateSpec]:
        return self._state

    @property
    def operations(self) -> Mapping[str, OperationSpec]:
        return self._operations

    @property
    def invariants(self) -> tuple[InvariantSpec, ...]:
        return self._invariants

    @property
    def verifiers(self) -> Mapping[str, VerifierSpec]:
        """The named verifier bindings (inline verifiers live on their state keys)."""
        return self._verifiers

    @property
    def scopes(self) -> ScopeSources:
        return self._scopes

    # --- keys --------------------------------------------------------------------------------

    @property
    def observations(self) -> tuple[ObservationRule, ...]:
        """What finished shell commands reveal (used by the post-tool hooks)."""
        return self._observations

    @property
    def memory(self) -> MemorySpec:
        """How agents' memory files become records (``statewise memory import``)."""
        return self._memory

    @property
    def commands(self) -> Mapping[str, CommandRule]:
        """The declarative shell-command rules, by name (``commands:``; docs/shell.md)."""
        return self._commands

    def state_spec(self, key: str) -> StateSpec | None:
        """The spec for a declared base key (``python.package_version``) or a record key.

        A record key with a qualifier (``python.package_version[requests]``) resolves only if
        its base key is declared ``qualified: true``; otherwise None.
        """
        if not isinstance(key, str):
            return None
        if "[" not in key:
            return self._state.get(key)
        try:
            check_key(key)
        except ValueError:
            return None
        spec = self._state.get(base_key(key))
        return spec if spec is not None and spec.qualified else None

    def key_type(self, key: str) -> KeyType | None:
        """The declared type of a record key, or None if records may not use that key.

        ``python.package_version[requests]`` gets the type of ``python.package_version`` when
        that key is ``qualified: true``. A qualified key without its qualifier is *not* a
        valid record key (which package?), and neither is a qualifier on an unqualified key.
        """
        spec = self.state_spec(key)
        if spec is None or (spec.qualified and "[" not in key):
            return None
        return spec.key_type

    def verifier_for(self, key: str) -> VerifierSpec | None:
        """The verifier that observes ``key`` (a named binding resolved, or the inline one)."""
        spec = self.state_spec(key)
        if spec is None or spec.verifier is None:
            return None
        if isinstance(spec.verifier, str):
            return self._verifiers[spec.verifier]
        return spec.verifier

    def unverifiable_keys(self) -> tuple[str, ...]:
        """Machine-authority keys without a verifier: allowed, but they can never be confirmed."""
        return tuple(
            key
            for key, spec in self._state.items()
            if spec.authority is Authority.MACHINE and spec.verifier is None
        )

    def adapter_names(self) -> frozenset[str]:
        """Every verifier adapter this contract refers to (for a registry to check at start-up)."""
        names = {spec.adapter for spec in self._verifiers.values()}
        names |= {
            spec.verifier.adapter for spec in self._state.values() if isinstance(spec.verifier, VerifierSpec)
        }
        return frozenset(names)

    def question_for(self, key: str, *, scope: str, value: Any) -> str:
        """The clarification question for a developer-owned key, from its template."""
        spec = self.state_spec(key)
        template = spec.question if spec is not None and spec.question else DEFAULT_QUESTION
        qualifier = key[len(base_key(key)) + 1 : -1] if "[" in key else ""
        values = {"key": key, "qualifier": qualifier, "scope": scope, "value": str(value)}
        return render_template(template, values)

    # --- operations ----------------------------------------------------------------------------

    def operation(self, name: str) -> OperationSpec | None:
        """The operation called ``name`` (e.g. ``git.push``), or None."""
        return self._operations.get(name)

    def operation_name(self, tool: str | None, operation: str) -> str | None:
        """The contract's name for an operation given as ``push`` + tool ``git`` or ``git.push``."""
        if operation in self._operations:
            return operation
        if tool:
            qualified = f"{tool}.{operation}"
            if qualified in self._operations:
                return qualified
        return None

    def keys_for_operation(self, name: str) -> tuple[str, ...]:
        """The state keys an operation can depend on: its slots' ``depends_on``, then its ``links``.

        Empty for an unknown operation.
        """
        spec = self._operations.get(name)
        if spec is None:
            return ()
        keys: dict[str, None] = {}
        for slot in spec.slots.values():
            keys.update(dict.fromkeys(slot.depends_on))
        keys.update(dict.fromkeys(spec.links))
        return tuple(keys)

    def slots_for_key(self, key: str, operation: str) -> tuple[str, ...]:
        """The slots of ``operation`` whose value may depend on record key ``key``."""
        spec = self._operations.get(operation)
        if spec is None:
            return ()
        return tuple(
            name for name, slot in spec.slots.items() if any(_entry_matches(e, key) for e in slot.depends_on)
        )

    def binds(
        self,
        key: Any,
        operation: Any,
        slot: str | None = None,
        *,
        args: Mapping[str, Any] | None = None,
    ) -> bool:
        """The paper's B(r, a, C_a): can this record support this operation (or this slot)?

        ``key`` is a record key or a record (anything with ``key`` and ``value_type``; a record
        whose type differs from the declared one does not bind: typed grounding). ``operation``
        is an operation name or an action (anything with ``tool``, ``operation`` and ``args``,
        as attributes or mapping entries), whose args are then used as ``args``.

        A key binds when it is declared and appears in a slot's ``depends_on`` (only that
        slot's, if ``slot`` is given) or in the operation's ``links``. An entry names a base
        key (matching every qualifier) or one exact qualified key. When ``args`` are known and
        the binding slot is a ``qualifier`` slot, the record's qualifier must be the slot's
        value (or one of them, for a list). Scope applicability to the task is the store's
        business, not the binding's. Unknown operations and slots bind nothing.
        """
        record_key = getattr(key, "key", key)
        if not isinstance(record_key, str):
            return False
        declared = self.key_type(record_key)
        if declared is None:
            return False
        record_type = getattr(key, "value_type", None)
        if record_type is not None and record_type != declared.value_type:
            return False  # ValueType is a str enum, so "bool" == ValueType.BOOL
        name, args = self._operation_and_args(operation, args)
        spec = self._operations.get(name) if name else None
        if spec is None:
            return False
        if slot is not None:
            slot_spec = spec.slots.get(slot)
            return slot_spec is not None and _slot_binds(slot, slot_spec, record_key, args)
        if any(_slot_binds(n, s, record_key, args) for n, s in spec.slots.items()):
            return True
        return any(_entry_matches(entry, record_key) for entry in spec.links)

    def _operation_and_args(self, operation: Any, args: Mapping[str, Any] | None) -> tuple[str | None, Any]:
        if isinstance(operation, str):
            return operation, args

        def get(field: str) -> Any:
            if isinstance(operation, Mapping):
                return operation.get(field)
            return getattr(operation, field, None)

        op_name = get("operation")
        if not isinstance(op_name, str):
            return None, args
        return self.operation_name(get("tool"), op_name), args if args is not None else get("args")

    # --- invariants ---------------------------------------------------------------------------

    def check_invariants(
        self, action: Any, state: Mapping[str, Any], *, deadline: float | None = None
    ) -> list[InvariantResult]:
        """Evaluate every invariant against one action and the resolved state.

        ``action`` is a mapping (or an Action model) with ``tool``, ``operation``, ``target``,
        ``args`` (a mapping; an empty one if absent), ``scope`` and ``risk``; ``operation`` may
        be the contract's name (``git.push``) or the tool's own (``push`` with tool ``git``),
        and invariants always see the contract's name. ``state`` maps record keys to values.

        Fail closed: if ``when`` or ``check`` cannot be evaluated (a missing key, a type error)
        or is not a bool, the invariant does not hold and ``error`` says why. Only a ``when``
        that evaluates to false makes an invariant not apply. An invariant whose ``when``
        requires other operations at its top level (``action.operation == "git.push" && ...``)
        is not evaluated at all: its ``when`` is false for this action whatever the state.

        Time bound: all evaluations of this call share ``deadline`` (a :func:`time.monotonic`
        instant; default :data:`INVARIANT_TIME_BUDGET` seconds from now). An evaluation that
        reaches it is stopped, and every invariant not evaluated by then is *unresolved*:
        ``holds`` False, ``timed_out`` True, ``error`` saying so. It never holds.
        """
        if deadline is None:
            deadline = time.monotonic() + INVARIANT_TIME_BUDGET
        try:
            action_map = dict(_action_data(action))
            name = self.operation_name(action_map.get("tool"), str(action_map.get("operation", "")))
            if name is not None:
                action_map["operation"] = name
            action_map.setdefault("args", {})
            action_data = _to_cel_data(action_map, "action")
            state_data = _to_cel_data(dict(state), "state")
        except (TypeError, ValueError) as error:
            # Nothing can be evaluated, so nothing holds.
            return self._input_failures(str(error))
        operation = action_data.get("operation")
        known_operation = isinstance(operation, str)
        activation: Activation | None = None
        results: list[InvariantResult] = []
        for invariant in self._invariants:
            compiled = self._compiled[invariant.name]
            if known_operation and compiled.operations is not None and operation not in compiled.operations:
                results.append(
                    InvariantResult(name=invariant.name, holds=True, message=invariant.message, applies=False)
                )
                continue
            if activation is None:
                try:
                    activation = Activation(
                        {"action": action_data, "state": state_data}, functions=_CEL_FUNCTIONS
                    )
                except ExpressionError as error:
                    return self._input_failures(str(error))
            results.append(self._evaluate(compiled, activation, deadline))
        return results

    def _input_failures(self, problem: str) -> list[InvariantResult]:
        return [
            InvariantResult(name=inv.name, holds=False, message=inv.message, error=f"input: {problem}")
            for inv in self._invariants
        ]

    def invariant_keys(self, action: Any, *, deadline: float | None = None) -> tuple[str, ...]:
        """The state keys read by the invariants that may apply to ``action``.

        An invariant may apply unless its ``when`` is false for this action whatever the state
        (evaluated with an empty state: a ``when`` that needs state counts as applying; one
        that requires another operation is not evaluated). The gate resolves exactly these
        keys before it evaluates the invariants.
        """
        keys: dict[str, None] = {}
        results = self.check_invariants(action, {}, deadline=deadline)
        for inv, result in zip(self._invariants, results, strict=True):
            if result.applies:
                keys.update(dict.fromkeys(self._compiled[inv.name].keys))
        return tuple(keys)

    def violations(
        self, action: Any, state: Mapping[str, Any], *, deadline: float | None = None
    ) -> list[InvariantResult]:
        """The invariants that do not hold (including those that could not be evaluated)."""
        return [result for result in self.check_invariants(action, state, deadline=deadline) if not result.holds]

    @staticmethod
    def _evaluate(compiled: _CompiledInvariant, activation: Activation, deadline: float) -> InvariantResult:
        spec = compiled.spec

        def run(expression: _LazyExpression, part: str) -> tuple[bool | None, str | None, bool]:
            try:
                result = expression.get().evaluate(activation, deadline=deadline, timeout=INVARIANT_TIME_BUDGET)
            except ExpressionTimeout as error:
                return None, f"{part}: {error}", True
            except ExpressionError as error:
                return None, f"{part}: {error}", False
            if isinstance(result, bool):
                return result, None, False
            return None, f"{part}: evaluated to {result!r}, not a bool"[:300], False

        applies, error, timed_out = run(compiled.when, "when")
        if error is not None:
            return InvariantResult(name=spec.name, holds=False, message=spec.message, error=error,
                                   timed_out=timed_out)
        if not applies:
            return InvariantResult(name=spec.name, holds=True, message=spec.message, applies=False)
        holds, error, timed_out = run(compiled.check, "check")
        return InvariantResult(
            name=spec.name, holds=bool(holds) and error is None, message=spec.message, error=error,
            timed_out=timed_out,
        )

    # --- composition -------------------------------------------------------------------------

    def extend(self, other: Contract) -> Contract:
        """A new contract: this one plus ``other``'s keys, operations, invariants and verifiers.

        Identical redefinitions are accepted; a different redefinition of a key, operation,
        verifier binding, invariant or the scopes is a ContractError in ``other``'s source.
        The result takes ``other``'s name, version and description.
        """
        parts = _merge(self._parts, self._source, other._parts, other._source)
        return Contract._assemble(
            name=other._name,
            version=other._version,
            description=other._description,
            source=other._source,
            bases=tuple(dict.fromkeys(self._bases + (self._name,) + other._bases)),
            parts=parts,
            compiled={**self._compiled, **other._compiled},
        )


def _entry_matches(entry: str, key: str) -> bool:
    return entry == key or ("[" not in entry and base_key(key) == entry)


def _slot_binds(name: str, slot: SlotSpec, key: str, args: Mapping[str, Any] | None) -> bool:
    if not any(_entry_matches(entry, key) for entry in slot.depends_on):
        return False
    if not slot.qualifier or args is None or "[" not in key:
        return True
    qualifier = key[len(base_key(key)) + 1 : -1]
    value = args.get(name)
    if isinstance(value, (list, tuple)):
        return qualifier in [str(v) for v in value]
    return value is not None and str(value) == qualifier


def _check_references(parts: _Parts, source: str) -> None:
    """Cross-reference checks that need the whole (merged) contract."""
    if parts.memory is not None:
        _check_memory_references(parts, parts.memory, source)
    for index, rule in enumerate(parts.observations):
        spec = parts.state.get(base_key(rule.key))
        if spec is None:
            raise ContractError(source, f"observations[{index}].key",
                                f"{rule.key!r} is not a key declared under state")
        if rule.value is not None:
            try:
                check_value(rule.value, spec.value_type, choices=spec.choices, key=rule.key)
            except ValueError as error:
                raise ContractError(source, f"observations[{index}].value", str(error)) from None
    for key, spec in parts.state.items():
        where = f"state.{key}"
        _check_choices(spec.value_type, spec.choices, source, where)
        verifier = spec.verifier
        if isinstance(verifier, str):
            if verifier not in parts.verifiers:
                defined = ", ".join(sorted(parts.verifiers)) or "none"
                raise ContractError(
                    source,
                    f"{where}.verifier",
                    f"refers to undefined verifier binding {verifier!r} (defined: {defined}); "
                    "define it under verifiers, or write an inline {adapter: ..., args: ...}",
                )
            verifier = parts.verifiers[verifier]
        if verifier is not None:
            if "qualifier" in verifier.placeholders() and not spec.qualified:
                raise ContractError(
                    source, f"{where}.verifier", "uses {qualifier} but the key is not qualified: true"
                )
            if verifier.read is not None and verifier.read.exit_status is not None:
                for code, value in verifier.read.exit_status.items():
                    try:
                        check_value(value, spec.value_type, choices=spec.choices, key=key)
                    except ValueError as error:
                        raise ContractError(
                            source, f"{where}.verifier", f"exit status {code} maps to a bad value: {error}"
                        ) from None
    for op_name, op in parts.operations.items():
        for slot_name, slot in op.slots.items():
            where = f"operations.{op_name}.slots.{slot_name}"
            _check_choices(slot.value_type, slot.choices, source, where)
            for index, entry in enumerate(slot.depends_on):
                _check_key_reference(parts, entry, source, f"{where}.depends_on[{index}]")
            if slot.qualifier:
                qualified = [e for e in slot.depends_on if "[" not in e and parts.state[e].qualified]
                if not qualified:
                    raise ContractError(
                        source,
                        f"{where}.qualifier",
                        "true, but the slot depends on no qualified key to qualify",
                    )
        for index, entry in enumerate(op.links):
            _check_key_reference(parts, entry, source, f"operations.{op_name}.links[{index}]")
    for rule_name, rule in parts.commands.items():
        where = f"commands.{rule_name}"
        if rule.read_only:
            if rule.operation is not None or rule.slot_names():
                raise ContractError(source, f"{where}.read_only", "a read-only rule names no operation and no slots")
            continue
        if rule.operation is None:
            raise ContractError(source, f"{where}.operation", "required (unless read_only is true)")
        target = parts.operations.get(rule.operation)
        if target is None:
            raise ContractError(source, f"{where}.operation",
                                f"{rule.operation!r} is not an operation declared under operations")
        for field_name, slot in rule.slot_names():
            if slot not in target.slots:
                declared = ", ".join(sorted(target.slots)) or "none"
                raise ContractError(source, f"{where}.{field_name}",
                                    f"{slot!r} is not a slot of {rule.operation} (declared: {declared})")
        for flag in rule.flags:
            if not flag.startswith("-") or flag in ("-", "--") or "=" in flag:
                raise ContractError(source, f"{where}.flags.{flag}", "a flag starts with - and holds no =")


def _check_memory_references(parts: _Parts, memory: MemorySpec, source: str) -> None:
    entries = [(f"memory.rules[{i}]", r.key, r.value) for i, r in enumerate(memory.rules)]
    entries += [(f"memory.implies[{i}]", r.key, r.value) for i, r in enumerate(memory.implies)]
    if memory.note_key is not None:
        entries.append(("memory.note_key", memory.note_key, None))
    entries += [(f"memory.corrections.{key}", key, None) for key in memory.corrections]
    for where, key, value in entries:
        spec = parts.state.get(base_key(key))
        if spec is None:
            raise ContractError(source, f"{where}.key", f"{key!r} is not a key declared under state")
        if value is not None:
            try:
                check_value(value, spec.value_type, choices=spec.choices, key=key)
            except ValueError as error:
                raise ContractError(source, f"{where}.value", str(error)) from None


def _check_choices(value_type: ValueType, choices: tuple[str, ...] | None, source: str, where: str) -> None:
    field = f"{where}.choices"
    if value_type is ValueType.ENUM and not choices:
        raise ContractError(source, field, "required when type is enum (a non-empty list of strings)")
    if value_type is not ValueType.ENUM and choices is not None:
        raise ContractError(source, field, f"only allowed when type is enum (type is {value_type})")
    if choices is not None and len(set(choices)) != len(choices):
        raise ContractError(source, field, "choices must be unique")


def _check_key_reference(parts: _Parts, entry: str, source: str, field: str) -> None:
    spec = parts.state.get(base_key(entry))
    if spec is None:
        raise ContractError(source, field, f"{entry!r} is not a key declared under state")
    if "[" in entry:
        try:
            check_key(entry)
        except ValueError:
            raise ContractError(source, field, f"{entry!r} is not a valid key") from None
        if not spec.qualified:
            raise ContractError(
                source, field, f"{entry!r} has a qualifier but {base_key(entry)} is not qualified: true"
            )


# --- loading ---------------------------------------------------------------------------------


#: Largest contract text accepted (the built-in coding contract is about 25 KB).
MAX_CONTRACT_BYTES = 512 * 1024
#: Deepest nesting of mappings and lists (a real contract needs about 7).
MAX_CONTRACT_DEPTH = 32
#: Most alias uses (``*name``) in one contract.
MAX_CONTRACT_ALIASES = 200
#: Most YAML nodes once every alias is expanded ("billion laughs" expands exponentially).
MAX_CONTRACT_NODES = 50_000

def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    import yaml  # noqa: PLC0415 - see _loaders

    seen: dict[Any, Any] = {}
    for key_node, _value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<: *anchor" entries may be overridden by explicit keys
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            continue  # unhashable; construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


def _contract_loader(base: type) -> type:
    """Safe YAML with two fixes for configuration files, on ``base`` (C or pure-Python).

    Duplicate keys are errors (PyYAML silently keeps the last, which would let a second
    ``repository.protected`` entry override the first unnoticed), and only true/false are
    booleans (YAML 1.1 would read ``no`` or ``on`` as booleans).
    """
    import yaml  # noqa: PLC0415 - see _loaders

    loader = type(f"_Contract{base.__name__}", (base,), {"__doc__": _contract_loader.__doc__})
    loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
    return loader


@functools.cache
def _loaders() -> tuple[type, type]:
    """(the loader to use, the pure-Python loader), built at the first parse.

    YAML is imported only when a contract text is parsed: a process that gets its contract
    from the compiled cache never imports it. The loader is libyaml's (CSafeLoader) when
    PyYAML was built with it, about ten times faster than the pure-Python one, which is the
    fallback.
    """
    import yaml  # noqa: PLC0415

    pure = _contract_loader(yaml.SafeLoader)
    fast = _contract_loader(yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else pure
    return fast, pure


class _Frame:
    """One open mapping or list while scanning the event stream."""

    __slots__ = ("anchor", "expanded", "expect_key", "index", "key", "mapping")

    def __init__(self, mapping: bool, anchor: str | None) -> None:
        self.mapping = mapping
        self.anchor = anchor
        self.expanded = 1
        self.expect_key = True
        self.key: str = "?"
        self.index = 0

    def step(self) -> str:
        if self.mapping:
            return self.key if not self.expect_key else "<key>"
        return f"[{self.index}]"


def _path_of(frames: list[_Frame]) -> str:
    path = ""
    for frame in frames:
        step = frame.step()
        path += step if step.startswith("[") or not path else f".{step}"
    return path


def _check_yaml_shape(text: str, source: str, loader_class: type) -> None:
    """Refuse, before anything is built, YAML whose shape no contract has.

    One pass over the parser's events (iterative, so it cannot recurse): nesting deeper
    than MAX_CONTRACT_DEPTH (named by its field path), more than MAX_CONTRACT_ALIASES alias
    uses, a document that expands to more than MAX_CONTRACT_NODES nodes once its aliases
    are followed (the "billion laughs"), and an alias inside its own anchor. Malformed YAML
    raises the parser's error, which the caller reports with its line and column.
    """
    import yaml  # noqa: PLC0415 - see _loaders

    loader = loader_class(text)
    frames: list[_Frame] = []
    sizes: dict[str, int] = {}
    open_anchors: set[str] = set()
    total = 0
    aliases = 0

    def completed(added: int, subtree: int, scalar: str | None) -> None:
        # ``added``: nodes not counted yet; ``subtree``: the finished node's expanded size.
        nonlocal total
        total += added
        if total > MAX_CONTRACT_NODES:
            where = _path_of(frames) or "the document"
            raise ContractError(
                source, _path_of(frames),
                f"the document expands to more than {MAX_CONTRACT_NODES} YAML nodes ({aliases} alias uses "
                f"so far, near {where}); a contract that large is refused, aliases included",
            )
        if frames:
            parent = frames[-1]
            parent.expanded += subtree
            if parent.mapping:
                if parent.expect_key:
                    parent.key = scalar if scalar is not None else "?"
                parent.expect_key = not parent.expect_key
            else:
                parent.index += 1

    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_CONTRACT_ALIASES:
                    raise ContractError(
                        source, _path_of(frames),
                        f"more than {MAX_CONTRACT_ALIASES} alias uses (*name); a contract needs far fewer",
                    )
                if event.anchor in open_anchors:
                    raise ContractError(
                        source, _path_of(frames), f"alias *{event.anchor} is inside its own anchor &{event.anchor}"
                    )
                expansion = sizes.get(event.anchor, 1)
                completed(expansion, expansion, None)
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor:
                    sizes[event.anchor] = 1
                completed(1, 1, event.value)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(frames) >= MAX_CONTRACT_DEPTH:
                    raise ContractError(
                        source, _path_of(frames),
                        f"nested more than {MAX_CONTRACT_DEPTH} levels deep; a contract needs far fewer",
                    )
                frames.append(_Frame(isinstance(event, yaml.MappingStartEvent), event.anchor))
                if event.anchor:
                    open_anchors.add(event.anchor)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                frame = frames.pop()
                if frame.anchor:
                    open_anchors.discard(frame.anchor)
                    sizes[frame.anchor] = frame.expanded
                completed(1, frame.expanded, None)  # its children were counted as they ended
    finally:
        loader.dispose()


def _parse_yaml(text: str, source: str, loader_class: type | None = None) -> dict[str, Any]:
    import yaml  # noqa: PLC0415 - see _loaders

    fast, pure = _loaders()
    loader_class = loader_class or fast
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTRACT_BYTES:
        raise ContractError(
            source, "", f"the contract is {size:,} bytes; the limit is {MAX_CONTRACT_BYTES:,} bytes"
        )
    try:
        _check_yaml_shape(text, source, loader_class)
        document = yaml.load(text, Loader=loader_class)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        if "nesting depth" in str(error.problem) and loader_class is not pure:
            # libyaml stops at its own depth limit while scanning ahead, before the shape check
            # sees the levels; the pure-Python scanner reaches the check, which names the field.
            _check_yaml_shape(text, source, pure)
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = ": ".join(part for part in (error.context, error.problem) if part)
        raise ContractError(source, "", f"malformed YAML at {where}: {problem}") from None
    except yaml.YAMLError as error:
        raise ContractError(source, "", f"malformed YAML: {error}") from None
    except RecursionError:
        raise ContractError(source, "", "nested too deeply to read") from None
    if document is None:
        raise ContractError(source, "", "the file is empty; a contract needs at least name and version")
    if not isinstance(document, dict):
        kind = type(document).__name__
        raise ContractError(source, "", f"a contract is a mapping at the top level, not a {kind}")
    return document


def _format_location(loc: Iterable[Any]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _unwrap_annotation(annotation: Any) -> list[Any]:
    """The concrete types inside Annotated / Optional / Union wrappers."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap_annotation(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _unwrap_annotation(arg)]
    return [annotation]


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class found by following ``loc`` through the document schema (best effort)."""
    candidates: list[Any] = [_ContractDocument]
    for part in loc:
        following: list[Any] = []
        for candidate in candidates:
            for concrete in _unwrap_annotation(candidate):
                origin = typing.get_origin(concrete)
                if isinstance(concrete, type) and issubclass(concrete, BaseModel):
                    for field_name, info in concrete.model_fields.items():
                        if part in (field_name, info.alias):
                            following.append(info.annotation)
                elif origin is dict:
                    following.append(typing.get_args(concrete)[1])
                elif origin in (tuple, list) and isinstance(part, int):
                    following.append(typing.get_args(concrete)[0])
        candidates = following
    for candidate in candidates:
        for concrete in _unwrap_annotation(candidate):
            if isinstance(concrete, type) and issubclass(concrete, BaseModel):
                return concrete
    return None


def _contract_error_from(error: ValidationError, source: str) -> ContractError:
    problems = error.errors(include_url=False)
    first = problems[0]
    loc = tuple(part for part in first["loc"] if part not in _DISCRIMINATOR_TAGS)
    kind = first["type"]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, _FieldProblem):
        loc = loc + tuple(cause.field.split("."))
    if loc and loc[-1] == "[key]":
        loc = loc[:-1]
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1])
        allowed = sorted(info.alias or name for name, info in model.model_fields.items()) if model else []
        problem = f"unknown field {loc[-1]!r}"
        if allowed:
            problem += f"; allowed fields: {', '.join(allowed)}"
    elif kind == "missing":
        problem = "required field is missing"
    elif kind in ("value_error", "assertion_error"):
        problem = str(cause) if cause is not None else first["msg"].removeprefix("Value error, ")
    else:
        shown = repr(first.get("input"))
        problem = f"{first['msg']}; got {shown[:80]}"
    if len(problems) > 1:
        problem += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
    return ContractError(source, _format_location(loc), problem)


def _document_parts(document: _ContractDocument) -> _Parts:
    return _Parts(
        state=dict(document.state),
        operations=dict(document.operations),
        invariants=list(document.invariants),
        verifiers=dict(document.verifiers),
        scopes=document.scopes,
        observations=list(document.observations),
        memory=document.memory,
        commands=dict(document.commands),
    )


# --- the compiled contract cache ----------------------------------------------------------
# Parsing and validating the built-in contract costs a hook process hundreds of milliseconds
# on every call. A validated document is pickled under the user's cache directory, keyed by
# the SHA-256 of the contract text together with the StateWise, pydantic and Python versions.
# An entry is used only when its header names that key and its payload's own SHA-256 checks
# out; anything else (missing, truncated, corrupt, another version, unreadable) is ignored
# and the text is parsed as if there were no cache. Entries are written atomically (a
# temporary file renamed into place) and only after the whole contract loaded.

_CACHE_MAGIC = b"statewise-contract-cache 2\n"
_CACHE_ENV_DIR = "STATEWISE_CACHE_DIR"
_CACHE_ENV_OFF = "STATEWISE_NO_CACHE"


def cache_directory() -> Path | None:
    """Where compiled contracts are cached, or None when caching is off.

    ``STATEWISE_NO_CACHE=1`` turns it off; ``STATEWISE_CACHE_DIR`` sets the directory;
    otherwise ``$XDG_CACHE_HOME/statewise`` or ``~/.cache/statewise``. Entries live in its
    ``contracts/`` subdirectory.
    """
    if os.environ.get(_CACHE_ENV_OFF, "").strip().lower() not in ("", "0", "false", "no"):
        return None
    explicit = os.environ.get(_CACHE_ENV_DIR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "statewise"
    try:
        return Path.home() / ".cache" / "statewise"
    except (RuntimeError, KeyError):
        return None


@functools.cache
def _code_identity() -> str:
    """The hash of this module's source: a pickled document is only valid for the models that
    pickled it, and a development checkout changes them without changing ``__version__``."""
    try:
        return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    except OSError:
        return "unknown"


def _cache_key(text: str) -> str:
    import pydantic  # noqa: PLC0415

    from statewise import __version__  # noqa: PLC0415 - the package is imported already

    digest = hashlib.sha256()
    for part in (_CACHE_MAGIC.decode().strip(), __version__, _code_identity(), pydantic.VERSION, sys.version,
                 sys.implementation.cache_tag or ""):
        digest.update(part.encode() + b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _cache_path(key: str) -> Path | None:
    folder = cache_directory()
    return None if folder is None else folder / "contracts" / f"{key}.pickle"


def _cache_read(key: str) -> _ContractDocument | None:
    """The cached document for ``key``, or None (never an exception, never another document)."""
    path = _cache_path(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONTRACT_BYTES * 8)
        header_end = len(_CACHE_MAGIC) + 2 * 65
        if not data.startswith(_CACHE_MAGIC) or len(data) <= header_end:
            return None
        stored_key = data[len(_CACHE_MAGIC) : len(_CACHE_MAGIC) + 64].decode("ascii")
        payload_digest = data[len(_CACHE_MAGIC) + 65 : len(_CACHE_MAGIC) + 129].decode("ascii")
        payload = data[header_end:]
        if stored_key != key or hashlib.sha256(payload).hexdigest() != payload_digest:
            return None
        entry_key, document, analysis = pickle.loads(payload)  # noqa: S301 - our own file, digest checked
        if entry_key != key or type(document) is not _ContractDocument or type(analysis) is not dict:
            return None
        for text, found in analysis.items():
            _TEXT_ANALYSIS.setdefault(text, found)
        return document
    except Exception:  # noqa: BLE001 - any failure means: parse the text instead
        return None


def _cache_write(key: str, document: _ContractDocument) -> None:
    """Store ``document`` for ``key`` atomically; failures are ignored (the cache is optional)."""
    path = _cache_path(key)
    if path is None:
        return
    temporary = None
    try:
        analysis = {text: _analysis(text) for text in _expression_texts(document)}
        payload = pickle.dumps((key, document, analysis), protocol=pickle.HIGHEST_PROTOCOL)
        header = _CACHE_MAGIC + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        import tempfile  # noqa: PLC0415 - only a process that writes the cache needs it

        descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".pickle", dir=path.parent)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(header + payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        temporary = None
    except Exception:  # noqa: BLE001 - a read-only or full disk only costs the next process time
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _validated_document(text: str, source: str) -> tuple[_ContractDocument, str | None, bool]:
    """(document, cache key, from the cache). Raises ContractError for invalid text."""
    key = _cache_key(text) if cache_directory() is not None else None
    if key is not None:
        cached = _cache_read(key)
        if cached is not None:
            return cached, key, True
    raw = _parse_yaml(text, source)
    try:
        document = _ContractDocument.model_validate(raw)
    except ValidationError as error:
        raise _contract_error_from(error, source) from None
    except RecursionError:
        raise ContractError(source, "", "nested too deeply to validate") from None
    return document, key, False


def _expression_texts(document: _ContractDocument) -> frozenset[str]:
    return frozenset(text for inv in document.invariants for text in (inv.when, inv.check))


def _load(text: str, source: str, base_dir: Path | None, seen: frozenset[str]) -> Contract:
    document, key, cached = _validated_document(text, source)
    # A cached document's expressions compiled when it was stored; they compile lazily now.
    validated = _expression_texts(document) if cached else frozenset()
    parts = _document_parts(document)
    if document.extends is None:
        contract = Contract._assemble(
            name=document.name, version=document.version, description=document.description,
            source=source, bases=(), parts=parts, validated=validated,
        )
    else:
        base = _resolve_extends(document.extends, source, base_dir, seen)
        merged = _merge(base._parts, base.source, parts, source)
        contract = Contract._assemble(
            name=document.name,
            version=document.version,
            description=document.description,
            source=source,
            bases=base.bases + (base.name,),
            parts=merged,
            compiled=base._compiled,
            validated=validated,
        )
    if key is not None and not cached:
        _cache_write(key, document)
    return contract


def _resolve_extends(target: str, source: str, base_dir: Path | None, seen: frozenset[str]) -> Contract:
    if not target.endswith((".yaml", ".yml")):
        if target in list_builtin_contracts():
            return builtin_contract(target)
        raise ContractError(
            source,
            "extends",
            f"{target!r} is neither a built-in contract ({', '.join(list_builtin_contracts())}) "
            "nor a .yaml/.yml file",
        )
    path = Path(target)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    resolved = str(path.resolve())
    if resolved in seen:
        raise ContractError(source, "extends", f"{target!r} extends itself (directly or through other files)")
    text = _read_contract_file(path, source, "extends")
    return _load(text, str(path), path.parent, seen | {resolved})


def load_contract(path: str | os.PathLike[str]) -> Contract:
    """Load and validate a contract file; with ``extends:`` return the merged contract.

    Raises ContractError (file, field path, what was expected) for anything invalid,
    including unreadable files and malformed YAML.
    """
    file = Path(path)
    text = _read_contract_file(file, str(file), "")
    return _load(text, str(file), file.parent, frozenset({str(file.resolve())}))


def _read_contract_file(file: Path, source: str, field: str) -> str:
    """The file's text; ContractError (naming ``source`` and ``field``) if it cannot be read,
    is larger than MAX_CONTRACT_BYTES (refused before reading it all) or is not UTF-8."""
    what = "the contract" if not field else repr(str(file))
    try:
        with open(file, "rb") as handle:
            data = handle.read(MAX_CONTRACT_BYTES + 1)
    except OSError as error:
        raise ContractError(source, field, f"cannot read {what}: {error.strerror or error}") from None
    if len(data) > MAX_CONTRACT_BYTES:
        raise ContractError(
            source, field, f"{what} is larger than the limit of {MAX_CONTRACT_BYTES:,} bytes"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ContractError(source, field, f"{what} is not UTF-8 text: {error}") from None


def load_contract_text(
    text: str,
    source: str = "<contract>",
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> Contract:
    """Load and validate a contract from YAML text; ``source`` names it in errors.

    A relative ``extends:`` path is resolved against ``base_dir`` (default: the current
    directory); a bare name such as ``coding`` is a built-in contract.
    """
    return _load(text, source, Path(base_dir) if base_dir is not None else None, frozenset())


_BUILTIN_PACKAGE = "statewise.contracts"


def _builtin_folder() -> Any:
    # The package's own directory when installed as files (the usual case, and cheap);
    # importlib.resources otherwise (a zip, say).
    folder = Path(__file__).with_name("contracts")
    if folder.is_dir():
        return folder
    import importlib.resources  # noqa: PLC0415

    return importlib.resources.files(_BUILTIN_PACKAGE)


def list_builtin_contracts() -> list[str]:
    """Names of the contracts shipped with StateWise (e.g. ``["coding"]``)."""
    folder = _builtin_folder()
    return sorted(entry.name[: -len(".yaml")] for entry in folder.iterdir() if entry.name.endswith(".yaml"))


def builtin_contract(name: str = "coding") -> Contract:
    """A built-in contract by name, loaded once and cached (contracts are immutable)."""
    return _builtin_contract(name)


@functools.cache
def _builtin_contract(name: str) -> Contract:
    if name not in list_builtin_contracts():
        raise ContractError(
            f"builtin:{name}",
            "",
            f"no built-in contract named {name!r}; available: {', '.join(list_builtin_contracts())}",
        )
    resource = _builtin_folder() / f"{name}.yaml"
    return _load(resource.read_text(encoding="utf-8"), f"statewise/contracts/{name}.yaml", None, frozenset())


def render_verifier(spec: VerifierSpec, values: Mapping[str, str]) -> VerifierSpec:
    """``spec`` with every placeholder in args, argv, cwd and json_path filled from ``values``.

    Raises KeyError if a placeholder the spec uses has no value. The verifier registry calls
    this with the task's ``branch``, ``repo``, ``workspace``, ``user`` and the key's
    ``qualifier``; values are substituted as whole strings, never re-parsed by a shell.
    """

    def fill(item: Any) -> Any:
        return render_template(item, values) if isinstance(item, str) else item

    updates: dict[str, Any] = {
        "args": {
            name: tuple(fill(i) for i in value) if isinstance(value, tuple) else fill(value)
            for name, value in spec.args.items()
        }
    }
    if spec.argv is not None:
        updates["argv"] = (spec.argv[0],) + tuple(fill(item) for item in spec.argv[1:])
    if spec.cwd is not None and spec.cwd != "workspace":
        updates["cwd"] = fill(spec.cwd)
    if spec.read is not None and spec.read.json_path is not None:
        updates["read"] = spec.read.model_copy(update={"json_path": fill(spec.read.json_path)})
    return spec.model_copy(update=updates)


def summarize(contract: Contract) -> dict[str, Any]:
    """A JSON-ready summary for ``statewise contract check FILE``."""
    inline = sum(1 for spec in contract.state.values() if isinstance(spec.verifier, VerifierSpec))
    warnings = [
        f"{key}: machine-authority key without a verifier; it can never be verified"
        for key in contract.unverifiable_keys()
    ]
    return {
        "name": contract.name,
        "version": contract.version,
        "source": contract.source,
        "extends": list(contract.bases),
        "keys": len(contract.state),
        "operations": len(contract.operations),
        "invariants": len(contract.invariants),
        "verifiers": len(contract.verifiers),
        "inline_verifiers": inline,
        "adapters": sorted(contract.adapter_names()),
        "warnings": warnings,
    }
