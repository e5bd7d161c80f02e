"""Typed record values.

Every state key declares one value type; a value is checked against it when a record is
created, and a mismatch is an error, never a silent coercion (``"true"`` is not a bool,
``3`` is not a version).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from typing import Any

from statewise.errors import ValueTypeError

__all__ = ["ValueType", "check_value", "parse_value_text", "render_value", "same_value"]

# Versions as tools print them: "3.11.7", "20.1.0", "v20.1.0", "1.0.0rc1", "2.3.0-beta.1".
_VERSION = re.compile(r"^v?\d+(\.\d+)*([-.+_]?[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)?$")


class ValueType(str, enum.Enum):
    """The value types a state key may declare."""

    BOOL = "bool"
    INT = "int"
    STRING = "string"
    VERSION = "version"
    PATH = "path"
    ENUM = "enum"
    LIST = "list"  # a list of strings

    def __str__(self) -> str:
        return self.value


def check_value(
    value: Any,
    value_type: ValueType | str,
    *,
    choices: Sequence[str] | None = None,
    key: str = "value",
) -> Any:
    """Return ``value`` unchanged if it is a valid ``value_type``; raise ValueTypeError if not.

    ``choices`` lists the allowed values of an ``enum`` key (it is ignored for other types).
    """
    vt = ValueType(value_type)

    def fail(expected: str) -> ValueTypeError:
        return ValueTypeError(key=key, expected=expected, got=value)

    if vt is ValueType.BOOL:
        if not isinstance(value, bool):
            raise fail("a bool (true or false)")
    elif vt is ValueType.INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("an int")
    elif vt is ValueType.STRING:
        if not isinstance(value, str):
            raise fail("a string")
    elif vt is ValueType.VERSION:
        if not isinstance(value, str) or not _VERSION.match(value):
            raise fail("a version string such as 3.11.7 or v20.1.0")
    elif vt is ValueType.PATH:
        if not isinstance(value, str) or not value or "\x00" in value:
            raise fail("a non-empty path string")
    elif vt is ValueType.ENUM:
        if not isinstance(value, str):
            raise fail("one of " + ", ".join(choices or ()))
        if choices is not None and value not in choices:
            raise fail("one of " + ", ".join(choices))
    elif vt is ValueType.LIST:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise fail("a list of strings")
    return value


def parse_value_text(
    text: str,
    value_type: ValueType | str,
    *,
    choices: Sequence[str] | None = None,
    key: str = "value",
) -> Any:
    """Parse a value typed on a command line into ``value_type``, strictly.

    Booleans accept only ``true``/``false``; ints only decimal digits; lists are comma
    separated (an empty string is the empty list). Anything else raises ValueTypeError.
    """
    vt = ValueType(value_type)
    if vt is ValueType.BOOL:
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise ValueTypeError(key=key, expected="true or false", got=text)
        return lowered == "true"
    if vt is ValueType.INT:
        if not re.fullmatch(r"-?\d+", text.strip()):
            raise ValueTypeError(key=key, expected="an int", got=text)
        return int(text.strip())
    if vt is ValueType.LIST:
        return [item.strip() for item in text.split(",") if item.strip()]
    return check_value(text, vt, choices=choices, key=key)


def render_value(value: Any) -> str:
    """A short human rendering of a value (``true``, ``3.11``, ``a, b``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def same_value(a: Any, b: Any, value_type: ValueType | str) -> bool:
    """Whether two values of one type say the same thing: versions ignore a leading ``v``
    (``v20.1.0`` is ``20.1.0``), everything else compares exactly."""
    if ValueType(value_type) is ValueType.VERSION and isinstance(a, str) and isinstance(b, str):
        return a.removeprefix("v") == b.removeprefix("v")
    return type(a) is type(b) and a == b
