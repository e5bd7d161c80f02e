"""Planners: the protocol, the built-ins, and how to name one on the command line.

A planner spec is ``rules`` (the offline rule planner), ``none`` (no planner: the agent
proposes, as behind a hook), ``openai:MODEL`` or ``anthropic:MODEL`` (model endpoints), or
the name of any planner registered under the ``statewise.planners`` entry-point group.
"""

from __future__ import annotations

from typing import Any

from statewise.errors import InputError
from statewise.planners.base import (
    MASKED,
    CallablePlanner,
    ContextRecord,
    Plan,
    Planner,
    PlanningContext,
    Task,
    Usage,
)
from statewise.registry import Registry

__all__ = [
    "MASKED",
    "PLANNERS",
    "CallablePlanner",
    "ContextRecord",
    "Plan",
    "Planner",
    "PlanningContext",
    "Task",
    "Usage",
    "make_planner",
]

#: Planners by name; built-ins and third parties register through ``statewise.planners``.
PLANNERS: Registry[Any] = Registry("planner", "statewise.planners")


def make_planner(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 noise: float = 0.0, seed: int = 0) -> Planner | None:
    """Build a planner from a spec such as ``rules``, ``none`` or ``openai:gpt-4o-mini``.

    ``noise`` > 0 wraps it in the seeded stochastic wrapper.
    """
    if spec == "none":
        if noise:
            raise InputError("--noise needs a planner; 'none' has nothing to perturb")
        return None
    name, _, model = spec.partition(":")
    factory = PLANNERS.get(name)
    planner: Planner
    if model:
        planner = factory(model, base_url=base_url, api_key=api_key)
    elif name in ("openai", "anthropic"):
        raise InputError(f"planner {spec!r}: name the model, e.g. {name}:MODEL")
    else:
        planner = factory()
    if noise:
        from statewise.planners.noisy import NoisyPlanner

        planner = NoisyPlanner(planner, noise=noise, seed=seed)
    return planner
