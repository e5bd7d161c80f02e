"""``config.value``: one value in a TOML, JSON, YAML, INI or dotenv file of the workspace.

The coding contract qualifies the key as ``config.value[<file>:<dotted.path>]`` and passes
the qualifier as ``spec``; a binding may instead give ``file`` and ``path`` separately, and
``format`` to override the format guessed from the file name. See :func:`parse_dotted_path`
for the path syntax and :func:`config_format` for the formats.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from statewise.verifiers.base import (
    Adapter,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    coerce_native,
    render_scalar,
)
from statewise.verifiers.filesystem import workspace_path

__all__ = ["ConfigValue", "config_format", "parse_dotenv", "parse_dotted_path", "split_spec"]

_MAX_BYTES = 5 * 1024 * 1024
FORMATS = ("toml", "json", "yaml", "ini", "dotenv")
_BY_SUFFIX = {
    ".toml": "toml",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".env": "dotenv",
}
_BY_NAME = {
    "pipfile": "toml",
    ".flake8": "ini",
    ".pylintrc": "ini",
    ".coveragerc": "ini",
    ".editorconfig": "ini",
    ".npmrc": "ini",
    ".babelrc": "json",
    ".prettierrc": "yaml",  # JSON or YAML; the YAML parser reads both
    ".eslintrc": "yaml",
}
_SEGMENT = re.compile(r'"((?:[^"\\]|\\.)*)"|([^."]+)')


def config_format(file: str) -> str | None:
    """The format of ``file`` from its name: ``.toml``/``Pipfile`` -> toml, ``.json`` -> json,
    ``.yaml``/``.yml`` -> yaml, ``.ini``/``.cfg``/``.conf`` and tool rc files -> ini,
    ``.env``/``.env.*``/``*.env`` -> dotenv; None if unknown."""
    name = Path(file).name
    lowered = name.lower()
    if lowered == ".env" or lowered.startswith(".env."):
        return "dotenv"
    if lowered in _BY_NAME:
        return _BY_NAME[lowered]
    return _BY_SUFFIX.get(Path(lowered).suffix)


def split_spec(spec: str) -> tuple[str, str]:
    """``pyproject.toml:tool.pytest.ini_options.addopts`` -> (file, dotted path), at the first ``:``."""
    file, sep, path = spec.partition(":")
    if not sep or not file or not path:
        raise VerifierArgumentError(f"{spec!r} is not <file>:<dotted.path>, e.g. pyproject.toml:project.name")
    return file, path


def parse_dotted_path(path: str) -> list[str]:
    """``tool.pytest.ini_options.addopts`` -> segments. A segment in double quotes may contain
    dots (``"python.analysis.extraPaths"``); a segment of digits indexes an array."""
    segments: list[str] = []
    position = 0
    while position <= len(path):
        match = _SEGMENT.match(path, position)
        if match is None:
            raise VerifierArgumentError(f'{path!r} is not a dotted path (a.b.c, "a.b".c)')
        if match.group(1) is not None:
            segments.append(json.loads(f'"{match.group(1)}"'))
        else:
            segments.append(match.group(2))
        position = match.end()
        if position == len(path):
            break
        if path[position] != ".":
            raise VerifierArgumentError(f"{path!r}: expected '.' at position {position}")
        position += 1
        if position == len(path):
            raise VerifierArgumentError(f"{path!r} ends with '.'")
    return segments


def parse_dotenv(text: str) -> dict[str, str]:
    """A simple dotenv reader: ``KEY=VALUE`` lines, optional ``export``, ``#`` comments,
    single quotes (literal) or double quotes (``\\n``, ``\\"``, ``\\\\`` escapes), inline
    ``#`` comments after unquoted values. The last assignment of a key wins."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export ") or stripped.startswith("export\t"):
            stripped = stripped[len("export") :].lstrip()
        key, sep, value = stripped.partition("=")
        key = key.strip()
        if not sep or not re.match(r"^[A-Za-z_][A-Za-z0-9_.-]*$", key):
            raise ValueError(f"line {number} is not KEY=VALUE")
        value = value.strip()
        if value[:1] in ("'", '"'):
            quote = value[0]
            end = 1
            while end < len(value) and value[end] != quote:
                end += 2 if quote == '"' and value[end] == "\\" else 1
            if end >= len(value):
                raise ValueError(f"line {number}: unterminated {quote} quote")
            inner = value[1:end]
            if quote == '"':
                inner = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), inner)
            value = inner
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        values[key] = value
    return values


def _load(text: str, fmt: str) -> Any:
    if fmt == "toml":
        return tomllib.loads(text)
    if fmt == "json":
        return json.loads(text)
    if fmt == "yaml":
        return yaml.safe_load(text)
    if fmt == "dotenv":
        return parse_dotenv(text)
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser


class _Missing(Exception):
    pass


def _lookup(document: Any, segments: list[str], fmt: str) -> Any:
    if fmt == "ini":
        parser: configparser.ConfigParser = document
        if len(segments) != 2:
            raise VerifierArgumentError("an INI path is <section>.<option> (quote a section with dots)")
        section, option = segments
        if not parser.has_section(section) and section != parser.default_section:
            raise _Missing(f"no section [{section}]")
        if not parser.has_option(section, option):
            raise _Missing(f"no option {option} in [{section}]")
        return parser.get(section, option)
    node = document
    walked: list[str] = []
    for segment in segments:
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit() and int(segment) < len(node):
            node = node[int(segment)]
        else:
            where = ".".join(walked) or "the top level"
            raise _Missing(f"no {segment!r} under {where}")
        walked.append(segment)
    return node


class ConfigValue(Adapter):
    """``config.value``: the value at ``path`` in ``file`` (or ``spec: <file>:<path>``).

    The value is converted to the key's type (:func:`statewise.verifiers.base.coerce_native`):
    for the coding contract's string key, strings are kept, booleans become ``true``/``false``,
    numbers their text, and tables or arrays compact JSON (``["-ra","-q"]``). ABSENT when the
    file does not exist or has no value at that path; UNAVAILABLE when it cannot be read or
    parsed, the format is unknown, or the file is outside the workspace.
    """

    name = "config.value"
    args = frozenset({"spec", "file", "path", "format"})

    def _observe(self, request: VerifierRequest) -> Observation:
        spec = self.text_arg(request, "spec")
        if spec is not None:
            if request.args.get("file") or request.args.get("path"):
                raise VerifierArgumentError("give either spec or file and path, not both")
            file, dotted = split_spec(spec)
        else:
            file = self.text_arg(request, "file") or ""
            dotted = self.text_arg(request, "path") or ""
            if not file or not dotted:
                raise VerifierArgumentError("needs spec (<file>:<dotted.path>) or both file and path")
        fmt = self.text_arg(request, "format") or config_format(file)
        if fmt not in FORMATS:
            raise VerifierArgumentError(
                f"cannot tell the format of {file}; give format: one of {', '.join(FORMATS)}"
                if fmt is None
                else f"format must be one of {', '.join(FORMATS)}, not {fmt!r}"
            )
        segments = parse_dotted_path(dotted)
        full = workspace_path(self.workspace(request), file)
        try:
            with open(full, "rb") as handle:
                raw = handle.read(_MAX_BYTES + 1)
        except (FileNotFoundError, NotADirectoryError):
            return Observation.absent(f"{full} does not exist", full)
        except OSError as error:
            return Observation.unavailable(f"cannot read {full}: {error.strerror or error}", full)
        if len(raw) > _MAX_BYTES:
            return Observation.unavailable(f"{full} is larger than {_MAX_BYTES} bytes", full)
        try:
            document = _load(raw.decode("utf-8-sig"), fmt)
        except (UnicodeDecodeError, ValueError, yaml.YAMLError, configparser.Error) as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            return Observation.unavailable(f"{full} is not valid {fmt}: {first}"[:300], full)
        try:
            value = _lookup(document, segments, fmt)
        except _Missing as missing:
            return Observation.absent(f"{full} has no {dotted}: {missing}", full)
        try:
            typed = coerce_native(value, request.value_type, request.choices)
        except ValueError as error:
            return Observation.unavailable(
                f"{full}: {dotted} = {render_scalar(value)[:100]} is not a {request.value_type}: {error}", full
            )
        return Observation.of(typed, f"{full} ({fmt}): {dotted} = {render_scalar(typed)[:200]}", f"{full}:{dotted}")
