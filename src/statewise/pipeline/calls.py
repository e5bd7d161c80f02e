"""Accounting for one guard check: cached planner calls and the costs they and verifiers incur."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from statewise.actions import Action
from statewise.errors import PlannerError
from statewise.pipeline.report import Costs
from statewise.planners.base import Planner, PlanningContext, Task, as_plan

__all__ = ["CostMeter", "PlannerCalls"]


@dataclass
class CostMeter:
    """Mutable counters for one check; frozen into a Costs report at the end."""

    planner_calls: int = 0
    planner_cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    verifier_calls: int = 0
    clarification_questions: int = 0
    approvals_asked: int = 0
    outside_seconds: float = 0.0  # time spent inside planners and verifiers
    started: float = field(default_factory=time.perf_counter)

    @contextmanager
    def outside(self) -> Iterator[None]:
        """Time spent in the block belongs to a planner, verifier or person, not the guard."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.outside_seconds += time.perf_counter() - started

    def freeze(self) -> Costs:
        wall = time.perf_counter() - self.started
        return Costs(
            planner_calls=self.planner_calls, planner_cache_hits=self.planner_cache_hits,
            input_tokens=self.input_tokens, output_tokens=self.output_tokens,
            verifier_calls=self.verifier_calls, clarification_questions=self.clarification_questions,
            approvals_asked=self.approvals_asked, wall_seconds=round(wall, 6),
            guard_seconds=round(max(0.0, wall - self.outside_seconds), 6),
        )


class PlannerCalls:
    """Calls a planner at most once per distinct (task, context, sample) within one check.

    A planner that raises, or returns something that is not an action, becomes a
    PlannerError; the error is cached too, so a failing probe is not retried.
    """

    def __init__(self, planner: Planner, meter: CostMeter) -> None:
        self.planner = planner
        self.meter = meter
        # One cache per check: the task is fixed, so the context and the sample identify a call.
        self._cache: dict[tuple[tuple[object, ...], int], Action | PlannerError] = {}

    @property
    def name(self) -> str:
        return getattr(self.planner, "name", type(self.planner).__name__)

    @property
    def stochastic(self) -> bool:
        return bool(getattr(self.planner, "stochastic", False))

    def plan(self, task: Task, context: PlanningContext, sample: int = 0) -> Action:
        key = (context.cache_key(), sample)
        cached = self._cache.get(key)
        if cached is not None:
            self.meter.planner_cache_hits += 1
            if isinstance(cached, PlannerError):
                raise cached
            return cached
        self.meter.planner_calls += 1
        try:
            with self.meter.outside():
                plan = as_plan(self.planner.plan(task, context.for_sample(sample)))
        except PlannerError as error:
            self._cache[key] = error
            raise
        except Exception as error:  # noqa: BLE001 - any planner failure is a planner error
            wrapped = PlannerError(self.name, f"{type(error).__name__}: {error}")
            self._cache[key] = wrapped
            raise wrapped from error
        if plan.usage is not None:
            self.meter.input_tokens += plan.usage.input_tokens
            self.meter.output_tokens += plan.usage.output_tokens
        self._cache[key] = plan.action
        return plan.action
