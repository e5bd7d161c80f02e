"""A stochastic wrapper: perturb any planner with a seeded probability.

With probability ``noise`` a call forgets one record of the context (chosen at random) before
the wrapped planner sees it, as a model sometimes overlooks part of its context. The draw is
a pure function of (seed, task, context, sample), so a run is reproducible, repeated samples
of one context vary, and the guard's cache stays exact.
"""

from __future__ import annotations

import random

from statewise.actions import Action
from statewise.planners.base import Plan, Planner, PlanningContext, Task, seeded_draw

__all__ = ["NoisyPlanner"]


class NoisyPlanner:
    """``NoisyPlanner(RulePlanner(), noise=0.2, seed=7)``: a planner that is sometimes wrong."""

    stochastic = True

    def __init__(self, inner: Planner, *, noise: float, seed: int = 0) -> None:
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"noise must be between 0 and 1, got {noise}")
        self.inner = inner
        self.noise = noise
        self.seed = seed
        self.name = f"noisy({getattr(inner, 'name', type(inner).__name__)}, p={noise}, seed={seed})"

    def _rng(self, task: Task, context: PlanningContext) -> random.Random:
        return seeded_draw("noisy", self.seed, task, context)

    def plan(self, task: Task, context: PlanningContext) -> Action | Plan:
        rng = self._rng(task, context)
        if context.records and rng.random() < self.noise:
            forgotten = rng.choice(context.records)
            context = context.without(forgotten.id)
        return self.inner.plan(task, context)
