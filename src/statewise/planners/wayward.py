"""A planner that does not always obey its memory: it sometimes overrules a record it relies on.

The rule planner obeys every record in its context, so an unguarded agent built on it fails
every case whose memory is wrong: 0% by construction. A model is not like that. It sometimes
second-guesses what it was told, or overlooks it, and then acts as if the record were not
there: sometimes that saves it from a wrong record, sometimes it loses a right one.
:class:`WaywardPlanner` models exactly that, and nothing case-specific:

1. it asks the wrapped planner for its plan on the full context;
2. it finds the records that plan *relies on*: those whose removal alone changes the wrapped
   planner's answer (a failure to plan counts as a change);
3. with probability ``rate`` it overrules one of them (chosen at random) and returns the plan
   of the context without it; otherwise it returns the plan of step 1.

So ``rate`` is the probability that one call overrules a record it would otherwise act on
(documented per run in its name, e.g. ``wayward(rules, p=0.3, seed=0)``). Which record it
overrules does not depend on whether the record is right: the planner cannot tell, as the
rule planner cannot. The draw is a pure function of (seed, task, context, sample), like
:class:`~statewise.planners.noisy.NoisyPlanner`'s, so a run is reproducible, repeated samples
of one context vary, and the guard's caches stay exact. It declares itself stochastic
(``stochastic = True``), so the guard asks several samples per probe.
"""

from __future__ import annotations

import random
from typing import Any

from statewise.actions import Action
from statewise.errors import PlannerError
from statewise.planners.base import (
    Plan,
    Planner,
    PlanningContext,
    Statement,
    Task,
    as_plan,
    read_corrections,
    seeded_draw,
)

__all__ = ["WaywardPlanner"]


class WaywardPlanner:
    """``WaywardPlanner(RulePlanner(), rate=0.3, seed=0)``: overrules a relied-on record with
    probability ``rate`` per call."""

    stochastic = True

    def __init__(self, inner: Planner, *, rate: float, seed: int = 0) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be between 0 and 1, got {rate}")
        self.inner = inner
        self.rate = rate
        self.seed = seed
        self.name = f"wayward({getattr(inner, 'name', type(inner).__name__)}, p={rate}, seed={seed})"

    def read_feedback(self, text: str, source: str) -> tuple[Statement, ...]:
        """The wrapped planner's way of reading feedback (the general corrections reader if it
        has none). What it is told enters its context and may be overruled like any record."""
        reader = getattr(self.inner, "read_feedback", None)
        return reader(text, source) if reader is not None else read_corrections(text, source)

    def _rng(self, task: Task, context: PlanningContext) -> random.Random:
        return seeded_draw("wayward", self.seed, task, context)

    def _answer(self, task: Task, context: PlanningContext) -> Action | None:
        try:
            return as_plan(self.inner.plan(task, context)).action
        except PlannerError:
            return None

    def relied_on(self, task: Task, context: PlanningContext) -> list[str]:
        """The ids of the records whose removal alone changes the wrapped planner's answer."""
        reference = _identity(self._answer(task, context))
        return [record.id for record in context.records
                if _identity(self._answer(task, context.without(record.id))) != reference]

    def plan(self, task: Task, context: PlanningContext) -> Action | Plan:
        rng = self._rng(task, context)
        if context.records and rng.random() < self.rate:
            relied = self.relied_on(task, context)
            if relied:
                context = context.without(rng.choice(relied))
        return self.inner.plan(task, context)


def _identity(action: Action | None) -> Any:
    """What counts as the same answer: the action without its free-text reason."""
    if action is None:
        return None
    return action.model_dump(mode="json", exclude={"reason", "basis"})
