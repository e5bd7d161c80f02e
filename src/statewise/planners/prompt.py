"""The prompt a model-backed planner sends, the schema its answer must follow, and the parser.

Both model planners (``openai_compat`` and ``anthropic``) share three things from here:

* :func:`build_prompt` turns (task, planning context, allowed operations) into a system and a
  user message. It is deterministic: the same inputs give byte-identical text, because the
  guard caches planner calls by their input. It reads no clock, no environment and no
  randomness; records keep the context's order (most specific first per key).
* :func:`action_schema` is the JSON Schema of the answer on the wire. It is valid in OpenAI's
  strict structured-output mode (every property required, ``additionalProperties: false``,
  only widely supported keywords), so the same schema serves as an Anthropic tool's
  ``input_schema``. Arguments travel as a list of ``{"name", "value"}`` pairs, because a free
  map cannot be expressed in strict mode.
* :func:`parse_action` validates what came back against that schema and converts it into a
  :class:`statewise.actions.Action`. Anything malformed raises :class:`PlannerError` naming the
  planner and the problem; nothing is repaired or guessed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from statewise.actions import STOP, Action
from statewise.errors import PlannerError
from statewise.planners.base import ContextRecord, PlanningContext, Task

if TYPE_CHECKING:
    from statewise.actions import Risk

__all__ = [
    "RISK_CLASSES",
    "Prompt",
    "action_schema",
    "build_prompt",
    "decode_json",
    "normalize_operations",
    "parse_action",
]

#: The risk classes a model may give an action (or null when it does not know).
RISK_CLASSES: tuple[str, ...] = ("low", "medium", "high", "critical")

#: What a masked record's value is shown as. Real values are always JSON literals, so a string
#: value "unknown" is shown with its quotes and cannot be confused with a masked one.
UNKNOWN = "unknown"

_SYSTEM = """\
You are the planner of a coding agent. You are given a task, where it runs, and the \
operational records the agent remembers that may bear on it (environment facts, repository \
policy, developer intent, task progress). Propose the single next side-effecting action that \
carries out the task, or an explicit stop.

Rules:
- Answer with exactly one JSON object that follows the schema given in the request, and nothing else.
- Propose exactly one action. To do nothing, use operation "stop" with a reason that says why \
(for example: a record the action depends on is unknown, stale or contradicts the task).
- Use only the allowed operations.
- Ground the action in the records. A record whose value is shown as unknown exists but its \
value is not known: do not assume one. A record marked stale may no longer hold.
- Record values are JSON literals: strings are quoted, true/false are booleans.
- Give arguments as a list of {"name": ..., "value": ...} pairs; argument names use letters, \
digits, "_" or "-"; a value is a string, a number, a boolean, null or a list of strings.
- scope is the scope the action affects, written like the record scopes (global, \
user:<name>, workspace:<path>, repo:<identity>, repo:<identity>@<branch>), or null.
- risk is one of low, medium, high, critical, or null."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """The two messages a model planner sends: instructions, and the request itself."""

    system: str
    user: str


def normalize_operations(operations: Iterable[str] | None) -> tuple[str, ...] | None:
    """Sorted, de-duplicated operation names without ``stop`` (always allowed); None = any."""
    if operations is None:
        return None
    if isinstance(operations, str):
        raise TypeError("operations must be a list of operation names, not one string")
    names: set[str] = set()
    for name in operations:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"operation names must be non-empty strings, got {name!r}")
        names.add(name.strip())
    names.discard(STOP)
    return tuple(sorted(names))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def _render_value(record: ContextRecord) -> str:
    if record.masked:
        return f"{UNKNOWN} (masked: the record exists, its value is not available)"
    try:
        return _json(record.value)
    except (TypeError, ValueError):
        # Not a JSON value (should not happen for a typed record): show its string form, quoted.
        return _json(str(record.value))


def _render_record(index: int, record: ContextRecord) -> str:
    observed = record.observed_at.isoformat() if record.observed_at is not None else UNKNOWN
    return "\n".join(
        [
            f"{index}. key: {record.key}",
            f"   value: {_render_value(record)}",
            f"   scope: {record.scope}",
            f"   source: {record.source} (authority: {record.authority})",
            f"   observed_at: {observed}",
            f"   stale: {'yes' if record.stale else 'no'}",
        ]
    )


def _render_scope(task: Task) -> list[str]:
    scope = task.scope
    return [
        f"user: {scope.user or UNKNOWN}",
        f"workspace: {scope.workspace or task.workspace or UNKNOWN}",
        f"repository: {scope.repo or UNKNOWN}",
        f"branch: {scope.branch or UNKNOWN}",
        f"task scope: {scope}",
    ]


def build_prompt(
    task: Task, context: PlanningContext, operations: Iterable[str] | None = None
) -> Prompt:
    """The planner prompt for ``task`` given ``context``; byte-identical for identical inputs."""
    allowed = normalize_operations(operations)
    lines: list[str] = ["TASK", _json(task.text)]
    if task.family:
        lines.append(f"task family: {task.family}")
    lines += ["", "WHERE IT RUNS", *_render_scope(task), ""]
    count = len(context.records)
    lines.append(f"RECORDS ({count}; for each key the most specific scope comes first)")
    if count:
        lines += [_render_record(i, r) for i, r in enumerate(context.records, start=1)]
    else:
        lines.append("(none)")
    lines += ["", "ALLOWED OPERATIONS"]
    if allowed is None:
        lines.append("any operation name of the form <tool>.<verb>, for example git.push")
    else:
        lines += [f"- {name}" for name in allowed]
    lines.append(f'- {STOP} (do nothing; give the reason)')
    lines += [
        "",
        "ANSWER",
        "Return exactly one action, or a stop, as one JSON object matching this JSON Schema:",
        json.dumps(action_schema(allowed), sort_keys=True, ensure_ascii=False),
    ]
    return Prompt(system=_SYSTEM, user="\n".join(lines))


def action_schema(operations: Sequence[str] | Iterable[str] | None = None) -> dict[str, Any]:
    """The JSON Schema of the answer on the wire, valid in OpenAI strict mode.

    With ``operations`` given, ``operation`` is an enum of those names plus ``stop``.
    """
    allowed = normalize_operations(operations)
    operation: dict[str, Any] = {
        "type": "string",
        "description": "the operation name, e.g. git.push, or stop",
    }
    if allowed is not None:
        operation["enum"] = [*allowed, STOP]
    nullable_string = {"type": ["string", "null"]}
    arg_value = {
        "anyOf": [
            {"type": "string"},
            {"type": "integer"},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array", "items": {"type": "string"}},
            {"type": "null"},
        ]
    }
    return {
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "the tool family, e.g. git, pip, shell, fs"},
            "operation": operation,
            "target": {**nullable_string, "description": "what it acts on: a ref, a path, a package"},
            "args": {
                "type": "array",
                "description": "the arguments, as name/value pairs (each name once)",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "value": arg_value},
                    "required": ["name", "value"],
                    "additionalProperties": False,
                },
            },
            "scope": {**nullable_string, "description": "the scope the action affects"},
            "risk": {"anyOf": [{"type": "string", "enum": list(RISK_CLASSES)}, {"type": "null"}]},
            "reason": {"type": "string", "description": "why this action, or why stop"},
        },
        "required": ["tool", "operation", "target", "args", "scope", "risk", "reason"],
        "additionalProperties": False,
    }


class _WireArg(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    value: bool | int | float | str | list[str] | None


class _WireAction(BaseModel):
    """The answer exactly as the schema describes it: every field present, no others."""

    model_config = ConfigDict(extra="forbid", strict=True)

    tool: str
    operation: str
    target: str | None
    args: list[_WireArg]
    scope: str | None
    risk: str | None
    reason: str


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


def _excerpt(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def decode_json(planner: str, text: str | None) -> Any:
    """Parse a model's text answer as one JSON value; PlannerError if it is not exactly that."""
    if text is None or not text.strip():
        raise PlannerError(planner, "the model returned no content")
    try:
        return json.loads(
            text,
            object_pairs_hook=_reject_duplicate_keys,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        raise PlannerError(
            planner,
            f"the model's answer is not valid JSON ({error}): {_excerpt(text)}",
        ) from None


_ARG_VALUE_TYPES = "must be a string, a number, a boolean, null or a list of strings"


def _describe_validation(error: ValidationError, limit: int = 5) -> str:
    problems: list[str] = []
    for item in error.errors():
        loc = [str(part) for part in item["loc"]]
        message = item["msg"]
        if len(loc) > 3 and loc[0] == "args" and loc[2] == "value":
            # One line for an argument value that fits none of the union's members.
            loc, message = loc[:3], _ARG_VALUE_TYPES
        problem = f"{'.'.join(loc) or '(root)'}: {message}"
        if problem not in problems:
            problems.append(problem)
    shown = problems[:limit]
    more = len(problems) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def parse_action(planner: str, data: Any, operations: Iterable[str] | None = None) -> Action:
    """Validate a decoded answer against :func:`action_schema` and convert it to an Action.

    A stop becomes :meth:`Action.stop` (its reason is required). Raises PlannerError for
    anything else that does not fit: a missing or extra field, a wrong type, a repeated
    argument name, an operation outside ``operations``, an unknown risk class.
    """
    if not isinstance(data, dict):
        raise PlannerError(planner, f"the model's answer is a JSON {type(data).__name__}, not an object")
    try:
        wire = _WireAction.model_validate(data)
    except ValidationError as error:
        raise PlannerError(
            planner,
            f"the model's answer does not match the action schema: {_describe_validation(error)}",
        ) from None
    allowed = normalize_operations(operations)
    operation = wire.operation
    if operation == STOP:
        if not wire.reason.strip():
            raise PlannerError(planner, "the model chose stop without giving a reason")
        return Action.stop(wire.reason, scope=wire.scope)
    if allowed is not None and operation not in allowed:
        raise PlannerError(
            planner,
            f"the model chose operation {operation!r}, which is not allowed here "
            f"(allowed: {', '.join(allowed) or 'none'}, stop)",
        )
    if wire.risk is not None and wire.risk not in RISK_CLASSES:
        raise PlannerError(
            planner,
            f"the model gave risk {wire.risk!r}; expected one of {', '.join(RISK_CLASSES)} or null",
        )
    args: dict[str, Any] = {}
    for arg in wire.args:
        if arg.name in args:
            raise PlannerError(planner, f"the model gave argument {arg.name!r} twice")
        if isinstance(arg.value, float) and not math.isfinite(arg.value):
            raise PlannerError(
                planner,
                f"the model gave argument {arg.name!r} the non-finite number {arg.value}",
            )
        args[arg.name] = arg.value
    try:
        return Action(
            tool=wire.tool, operation=operation, target=wire.target, args=args,
            scope=wire.scope, risk=cast("Risk | None", wire.risk), reason=wire.reason,  # validated by Action
        )
    except ValidationError as error:
        raise PlannerError(
            planner,
            f"the model's answer is not a valid action: {_describe_validation(error)}",
        ) from None
