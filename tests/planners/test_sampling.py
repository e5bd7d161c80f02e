"""Planners declare how they sample: temperature above 0 (or the server's default) is stochastic."""

from __future__ import annotations

from statewise.pipeline.calls import PlannerCalls
from statewise.planners.anthropic import AnthropicPlanner
from statewise.planners.base import samples_stochastically
from statewise.planners.noisy import NoisyPlanner
from statewise.planners.openai_compat import OpenAICompatiblePlanner
from statewise.planners.rules import RulePlanner

LOCAL = "http://127.0.0.1:9"  # never contacted: constructing a planner sends nothing


def test_model_planners_declare_their_sampling():
    assert not samples_stochastically(OpenAICompatiblePlanner("m", base_url=LOCAL, api_key="x"))  # 0.0 by default
    assert samples_stochastically(OpenAICompatiblePlanner("m", base_url=LOCAL, api_key="x", temperature=0.7))
    assert samples_stochastically(OpenAICompatiblePlanner("m", base_url=LOCAL, api_key="x", temperature=None))
    # The Anthropic planner sends no temperature by default: the API samples at 1.0.
    default = AnthropicPlanner("m", base_url=LOCAL, api_key="x")
    assert default.temperature is None and samples_stochastically(default)
    assert "extra_body" not in default.request(*_task_and_context())
    assert not samples_stochastically(AnthropicPlanner("m", base_url=LOCAL, api_key="x", temperature=0))


def test_the_rule_planner_is_deterministic_and_the_noise_wrapper_is_not():
    assert not samples_stochastically(RulePlanner())
    assert samples_stochastically(NoisyPlanner(RulePlanner(), noise=0.2))
    assert not samples_stochastically(object())  # undeclared: deterministic


def test_the_guard_reads_the_declaration():
    stochastic = AnthropicPlanner("m", base_url=LOCAL, api_key="x")
    assert PlannerCalls(stochastic, _meter()).stochastic
    assert not PlannerCalls(RulePlanner(), _meter()).stochastic


def _meter():
    from statewise.pipeline.calls import CostMeter

    return CostMeter()


def _task_and_context():
    from statewise.planners.base import PlanningContext, Task
    from statewise.scopes import TaskScope

    return Task(text="t", scope=TaskScope(user="dev")), PlanningContext.of([])
