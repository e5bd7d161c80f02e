"""A pydantic ValidationError turned into one ContractError: the input, the field path, the problem."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from statewise.contract.fields import _FieldProblem
from statewise.contract.spec import ContractDocument
from statewise.contract.verifier_spec import DISCRIMINATOR_TAGS
from statewise.errors import ContractError


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
    candidates: list[Any] = [ContractDocument]
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


def contract_error_from(error: ValidationError, source: str) -> ContractError:
    """The first problem of ``error`` as one ContractError: ``source``, the field path, what was
    expected (the allowed fields, for an unknown one), and how many more problems there were."""
    problems = error.errors(include_url=False)
    first = problems[0]
    loc = tuple(part for part in first["loc"] if part not in DISCRIMINATOR_TAGS)
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
