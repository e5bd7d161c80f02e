"""``command``: the generic declarative verifier.

A contract binding such as::

    npm_version:
      adapter: command
      argv: [npm, --version]
      read:
        regex: '^\\s*v?(\\d+(?:\\.\\d+)*\\S*)'

runs ``argv`` (a list; placeholders were filled per element by
:func:`statewise.verifiers.fill_placeholders`, never joined into a shell string) in the
workspace (or ``cwd``) with the binding's timeout, and reads the value in one of three ways:

* ``exit_status: {0: true, 1: false}``: the exit status picks the value; an unmapped
  status is UNAVAILABLE.
* ``regex``: searched (multi-line) in the output; group 1 is the value, parsed into the
  key's type by :func:`statewise.verifiers.base.parse_text_value`.
* ``json_path``: the output parsed as JSON, then ``$.a.b``, ``$.a[0]`` or ``$.a["@x/y"]``
  selects the value, converted by :func:`statewise.verifiers.base.coerce_native`.

For ``regex`` and ``json_path`` the command must exit 0. A command that is not on PATH,
times out (its whole process group is killed), fails, prints nothing that matches, or a
path that selects nothing gives UNAVAILABLE: a missing JSON path is a shape the binding did
not expect, not proof of absence. ``stream: stderr`` reads standard error instead of
standard output. Output that is not UTF-8 is never read (UNAVAILABLE), and neither is an
empty one: a regex that matches the empty string there does not make nothing a value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from statewise.contract import RegexTimeout, contract_regex
from statewise.verifiers.base import (
    Adapter,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    coerce_native,
    has_control,
    parse_text_value,
    render_scalar,
    run_command,
)

__all__ = ["Command", "json_path_get", "parse_json_path"]

_STEP = re.compile(r'\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def parse_json_path(path: str) -> list[str | int]:
    """``$.a["b.c"][0]`` -> ``["a", "b.c", 0]``; VerifierArgumentError if malformed."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise VerifierArgumentError(f"{path!r} is not a JSON path (it starts with $)")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise VerifierArgumentError(f"{path!r}: cannot read the path at position {position}")
        name, index, quoted = match.groups()
        if name is not None:
            steps.append(name)
        elif index is not None:
            steps.append(int(index))
        else:
            steps.append(json.loads(f'"{quoted}"'))
        position = match.end()
    return steps


class _NoValue(Exception):
    pass


def json_path_get(document: Any, steps: list[str | int]) -> Any:
    """Follow ``steps`` into ``document``; _NoValue if a step selects nothing."""
    node = document
    for step in steps:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise _NoValue(f"no element [{step}]")
            node = node[step]
        else:
            if not isinstance(node, dict) or step not in node:
                raise _NoValue(f"no member {step!r}")
            node = node[step]
    return node


class Command(Adapter):
    """The generic ``command`` adapter (see the module documentation)."""

    name = "command"
    args = frozenset({"argv", "cwd", "stream", "read"})
    required = frozenset({"argv", "read"})

    def _observe(self, request: VerifierRequest) -> Observation:
        argv = request.args.get("argv")
        if isinstance(argv, str) or not isinstance(argv, (list, tuple)) or not argv:
            raise VerifierArgumentError("argv must be a non-empty list of strings (never a shell string)")
        if not all(isinstance(item, str) for item in argv):
            raise VerifierArgumentError(f"every argv element must be a string: {argv!r}")
        read = request.args.get("read")
        if not isinstance(read, Mapping) or len([k for k, v in read.items() if v is not None]) != 1:
            raise VerifierArgumentError("read needs exactly one of exit_status, regex or json_path")
        kind, how = next((k, v) for k, v in read.items() if v is not None)
        if kind not in ("exit_status", "regex", "json_path"):
            raise VerifierArgumentError(f"unknown read kind {kind!r}")
        stream = self.text_arg(request, "stream", "stdout")
        if stream not in ("stdout", "stderr"):
            raise VerifierArgumentError(f"stream must be stdout or stderr, not {stream!r}")
        cwd = self._cwd(request)
        result = run_command(argv, cwd=cwd, timeout=request.timeout, env=request.env)
        if result.error is not None:
            return Observation.unavailable(result.error, result.reference)
        reference = result.reference
        if kind == "exit_status":
            mapping = {int(code): value for code, value in dict(how).items()}
            if result.returncode not in mapping:
                return Observation.unavailable(
                    f"exit status {result.returncode} is not mapped ({result.describe_failure()})", reference
                )
            value = mapping[result.returncode]
            try:
                typed = coerce_native(value, request.value_type, request.choices)
            except ValueError as error:
                return Observation.unavailable(f"exit status {result.returncode} maps to {value!r}: {error}", reference)
            return Observation.of(typed, f"{argv[0]} exited with status {result.returncode}", reference)
        if result.returncode != 0:
            return Observation.unavailable(result.describe_failure(), reference)
        text = result.strict_stdout() if stream == "stdout" else result.strict_stderr()
        if text is None:
            # Undecodable bytes are garbage; a regex could still "find" a value in them.
            return Observation.unavailable(
                f"{argv[0]} printed bytes on {stream} that are not UTF-8 text; nothing was read from them", reference
            )
        if kind == "regex":
            return self._regex(str(how), text, request, reference, stream)
        return self._json(str(how), text, request, reference, stream)

    def _cwd(self, request: VerifierRequest) -> Path:
        cwd = request.args.get("cwd")
        workspace = self.workspace(request)
        if cwd in (None, "", "workspace"):
            return workspace
        if not isinstance(cwd, str):
            raise VerifierArgumentError(f"cwd must be a string, not {cwd!r}")
        path = Path(cwd)
        return path if path.is_absolute() else workspace / path

    @staticmethod
    def _regex(pattern: str, text: str, request: VerifierRequest, reference: str, stream: str) -> Observation:
        try:
            compiled = contract_regex(pattern, multiline=True)
        except ValueError as error:
            raise VerifierArgumentError(f"bad regex {pattern!r}: {error}") from None
        if compiled.groups < 1:
            raise VerifierArgumentError(f"the regex {pattern!r} has no group to capture the value")
        if not text.strip():
            return Observation.unavailable(f"{stream} is empty; nothing to read a value from", reference)
        try:
            # Time-bounded: a pathological pattern leaves the value unknown, never "no".
            match = compiled.search(text)
        except RegexTimeout as error:
            return Observation.unavailable(str(error), reference)
        if match is None or match.group(1) is None:
            shown = text.strip()[:120]
            return Observation.unavailable(f"nothing in {stream} matches {pattern!r}: {shown!r}", reference)
        if has_control(match.group(1)):
            return Observation.unavailable(
                f"{stream} matched {match.group(1)[:60]!r}, which holds control characters: garbage, not a value",
                reference,
            )
        try:
            typed = parse_text_value(match.group(1), request.value_type, request.choices)
        except ValueError as error:
            return Observation.unavailable(
                f"{stream} matched {match.group(1)!r}, not a {request.value_type}: {error}", reference
            )
        return Observation.of(typed, f"{stream} matched {pattern!r}: {match.group(1)[:120]!r}", reference)

    @staticmethod
    def _json(path: str, text: str, request: VerifierRequest, reference: str, stream: str) -> Observation:
        steps = parse_json_path(path)
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            return Observation.unavailable(f"{stream} is not JSON ({error}): {text.strip()[:120]!r}", reference)
        try:
            value = json_path_get(document, steps)
        except _NoValue as missing:
            return Observation.unavailable(f"{path} selects nothing in the output ({missing})", reference)
        if isinstance(value, str) and has_control(value):
            return Observation.unavailable(f"{path} = {value[:60]!r} holds control characters: not a value", reference)
        try:
            typed = coerce_native(value, request.value_type, request.choices)
        except ValueError as error:
            return Observation.unavailable(
                f"{path} = {render_scalar(value)[:100]} is not a {request.value_type}: {error}", reference
            )
        return Observation.of(typed, f"{path} = {render_scalar(typed)[:120]} in the JSON on {stream}", reference)
