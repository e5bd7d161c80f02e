"""The contract models' shared field types and validators (names, enums, scalars)."""

from __future__ import annotations

import enum
import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from statewise.values import ValueType

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


def named(kind: str) -> Any:
    """An after-validator: the string is a valid ``kind`` name (contract, operation, slot, ...)."""
    pattern, expected = _NAME_PATTERNS[kind]

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not a valid {kind} name; expected {expected}")
        return value

    return AfterValidator(check)


def _enum_label(member: Any, by_label: bool) -> str:
    # ScopeLevel is written by its label (repo, not 3); the other enums are str enums.
    return str(member.label if by_label else member.value)


def enum_parser(enum_type: type[enum.Enum], *, by_label: bool = False) -> Any:
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


class SpecModel(BaseModel):
    """The base of every contract model: frozen, and an unknown field is an error."""

    # defer_build: the validators are built at the first validation, so a process that gets
    # its contract from the compiled cache never pays for building them.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=False, defer_build=True)


TypeField = Annotated[ValueType, enum_parser(ValueType)]
Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
ArgValue = Scalar | tuple[Scalar, ...]
NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]
