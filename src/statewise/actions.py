"""Normalized actions and the distance between them (the paper's a and d_A).

Every proposal — from a rule planner, a model, or a shell command an agent is about to run —
is normalized into one :class:`Action` so that the guard can compare proposals and check
them against state. An explicit stop is an action too (``operation == "stop"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["STOP", "Action", "ActionDifference", "action_distance"]

#: The operation name of an explicit stop.
STOP = "stop"

ArgValue = bool | int | float | str | list[str] | None
Risk = Literal["low", "medium", "high", "critical"]
_ARG_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")

#: How much each property weighs in :func:`action_distance` (they sum to 1).
WEIGHTS = {"operation": 0.4, "target": 0.2, "args": 0.2, "scope": 0.1, "risk": 0.1}


class Action(BaseModel):
    """A normalized side-effecting proposal: which operation, on what, with which arguments."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1, description="the tool family, e.g. git, pip, shell, fs")
    operation: str = Field(min_length=1, description="a contract operation name, e.g. git.push, or stop")
    target: str | None = Field(default=None, description="what it acts on: a ref, a path, a package")
    args: dict[str, ArgValue] = Field(default_factory=dict)
    scope: str | None = Field(default=None, description="the scope it affects, e.g. repo:github.com/acme/app@main")
    risk: Risk | None = Field(default=None, description="the risk class: low, medium, high, critical")
    reason: str = Field(default="", description="why (the planner's rationale, or why it stops)")
    basis: tuple[str, ...] | None = Field(
        default=None, description="the state keys the decision rested on, when the planner can say (a stop's "
                                  "basis tells the guard which records to examine); not compared by action_distance")

    @field_validator("args")
    @classmethod
    def _plain_names(cls, value: dict[str, ArgValue]) -> dict[str, ArgValue]:
        for name in value:
            if not _ARG_NAME.match(name):
                raise ValueError(
                    f"argument name {name!r} must start with a letter and hold letters, digits, '_' or '-'")
        return value

    @classmethod
    def stop(cls, reason: str, *, scope: str | None = None, basis: Iterable[str] | None = None) -> Action:
        """An explicit decision to do nothing, with the reason (and the state keys it rested on)."""
        return cls(tool="statewise", operation=STOP, reason=reason, scope=scope, risk="low",
                   basis=tuple(basis) if basis is not None else None)

    @property
    def is_stop(self) -> bool:
        return self.operation == STOP

    def describe(self) -> str:
        """A one-line human rendering: ``git.push origin/main (force=true)``."""
        if self.is_stop:
            return f"stop: {self.reason}" if self.reason else "stop"
        args = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(self.args.items()))
        text = self.operation + (f" {self.target}" if self.target else "")
        return f"{text} ({args})" if args else text


@dataclass(frozen=True, slots=True)
class ActionDifference:
    """How two actions differ: the distance in [0, 1] and the properties that changed."""

    distance: float
    changed: tuple[str, ...]  # "operation", "target", "scope", "risk", "args.<name>"

    @property
    def same(self) -> bool:
        return self.distance == 0.0


def _arg_pairs(action: Action, ignore: frozenset[str]) -> set[tuple[str, str, object]]:
    # The type name keeps True apart from 1 (equal in Python, different arguments here).
    return {
        (name, type(value).__name__, tuple(value) if isinstance(value, list) else value)
        for name, value in action.args.items() if name not in ignore
    }


def action_distance(a: Action, b: Action, *, ignore_args: Iterable[str] = ()) -> ActionDifference:
    """Compare two actions on operation, target, arguments, scope and risk.

    Each property contributes its weight when it differs; arguments contribute the Jaccard
    distance between their (name, value) sets, so the whole is a metric: zero only for
    equal actions (on the compared properties), symmetric, and obeying the triangle
    inequality. ``ignore_args`` names arguments that carry no decision (a commit message).
    """
    ignored = frozenset(ignore_args)
    changed: list[str] = []
    distance = 0.0
    for prop in ("operation", "target", "scope", "risk"):
        if getattr(a, prop) != getattr(b, prop):
            changed.append(prop)
            distance += WEIGHTS[prop]
    pairs_a, pairs_b = _arg_pairs(a, ignored), _arg_pairs(b, ignored)
    union = pairs_a | pairs_b
    if union:
        jaccard = 1.0 - len(pairs_a & pairs_b) / len(union)
        if jaccard:
            distance += WEIGHTS["args"] * jaccard
            names = sorted({pair[0] for pair in pairs_a ^ pairs_b})
            changed.extend(f"args.{name}" for name in names)
    return ActionDifference(distance=round(distance, 9), changed=tuple(changed))
