"""The rule planner (playbooks) and the seeded stochastic wrapper."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewise.errors import ContractError, PlannerError
from statewise.planners import make_planner
from statewise.planners.base import MASKED, CallablePlanner, ContextRecord, PlanningContext, Task
from statewise.planners.noisy import NoisyPlanner
from statewise.planners.rules import RulePlanner, builtin_playbook, load_playbook, load_playbook_text
from statewise.scopes import TaskScope

SCOPE = TaskScope(user="dev", workspace="/w/app", repo="github.com/acme/app", branch="main")


def record(key, value, rid=None):
    return ContextRecord(id=rid or key, key=key, value=value, scope="global", source="developer", authority="developer")


def context(**state):
    return PlanningContext.of(record(key.replace("__", "."), value) for key, value in state.items())


def test_push_follows_the_protection_record():
    planner = RulePlanner()
    task = Task(text="push the changes", scope=SCOPE)
    unprotected = PlanningContext.of([record("repository.protected", False)])
    assert planner.plan(task, unprotected).args == {"remote": "origin", "branch": "main", "source": "HEAD",
                                                    "force": True}
    for probed in (unprotected.with_value("repository.protected", True),
                   unprotected.with_value("repository.protected", MASKED), unprotected.without("repository.protected")):
        action = planner.plan(task, probed)
        assert action.args["branch"] == "agent/push-the-changes" and "force" not in action.args


def test_templates_keep_types_and_fill_params_and_prefixes():
    planner = RulePlanner()
    prefixed = PlanningContext.of([record("user.preferred_branch_prefix", "feature/")])
    assert planner.plan(Task(text="push it", scope=SCOPE), prefixed).args["branch"] == "feature/push-it"
    install = planner.plan(Task(text="install requests", scope=SCOPE, params={"package": "requests"}),
                           PlanningContext.of([record("runtime.python_interpreter", "/w/app/.venv/bin/python")]))
    assert install.operation == "pip.install"
    assert install.args == {"package": "requests", "interpreter": "/w/app/.venv/bin/python"}


def test_rules_that_cannot_be_filled_fall_through_and_stop_rules_stop():
    planner = RulePlanner()
    stop = planner.plan(Task(text="clean the build output", scope=SCOPE), PlanningContext())
    assert stop.is_stop and "no build directory" in stop.reason


def test_unknown_families_and_unmatched_tasks_are_planner_errors():
    with pytest.raises(PlannerError):
        RulePlanner().plan(Task(text="deploy", scope=SCOPE, family="deploy"), PlanningContext())
    with pytest.raises(PlannerError):
        RulePlanner().plan(Task(text="make me a sandwich", scope=SCOPE), PlanningContext())


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("name: x\nfamilies: {f: {rules: [{when: 'state[', action: {tool: a, operation: b}}]}}", "rules[0].when"),
        ("name: x\nfamilies: {f: {rules: [{action: {tool: a, operation: b}, stop: why}]}}", "families.f.rules.0"),
        ("name: x\nfamilies: {f: {rules: []}}", "families.f.rules"),
        ("name: [\n", "line"),
    ],
)
def test_malformed_playbooks_name_the_field(text, field):
    with pytest.raises(ContractError) as info:
        load_playbook_text(text, "book.yaml")
    assert "book.yaml" in str(info.value) and field in str(info.value)


def test_noisy_planner_is_reproducible_and_varies_across_samples():
    seen = []

    def spy(task, state):
        seen.append(tuple(sorted(state)))
        return {"tool": "git", "operation": "git.push", "args": {"n": len(state)}}

    noisy = NoisyPlanner(CallablePlanner(spy), noise=0.5, seed=3)
    task = Task(text="push", scope=SCOPE)
    base = PlanningContext.of([record(f"k.k{i}", i) for i in range(6)])
    first = [noisy.plan(task, base.for_sample(s)).args["n"] for s in range(40)]
    second = [noisy.plan(task, base.for_sample(s)).args["n"] for s in range(40)]
    assert first == second  # a pure function of (seed, task, context, sample)
    assert set(first) == {5, 6}  # sometimes a record is forgotten, sometimes not
    assert noisy.stochastic and "p=0.5" in noisy.name
    never = NoisyPlanner(CallablePlanner(spy), noise=0.0, seed=3)
    assert {never.plan(task, base.for_sample(s)).args["n"] for s in range(10)} == {6}
    with pytest.raises(ValueError):
        NoisyPlanner(CallablePlanner(spy), noise=1.5)


def test_make_planner_specs():
    assert make_planner("none") is None
    assert isinstance(make_planner("rules"), RulePlanner)
    assert isinstance(make_planner("rules", noise=0.1), NoisyPlanner)
    with pytest.raises(Exception):
        make_planner("openai")
    with pytest.raises(Exception):
        make_planner("nonexistent")


def test_a_branch_pattern_in_a_record_is_read_as_a_pattern_not_a_name():
    # The origin protects `release/*`; a record listing that pattern protects release/2.4 too,
    # as the contract's invariants read it (glob_match). Read literally, release/2.4 looked
    # unprotected and the hotfix went straight to it (gp-publish-hotfix-stale, issue 23).
    cases = Path(__file__).resolve().parents[2] / "benchmarks" / "cases"
    planner = RulePlanner(builtin_playbook().extend(load_playbook(cases / "development" / "playbook.yaml")))
    task = Task(text="publish the hotfix", scope=SCOPE, family="publish_hotfix", params={"branch": "release/2.4"})
    patterned = planner.plan(task, context(repository__protected_branches=["main", "release/*"]))
    assert patterned.args["branch"] == "agent/publish-the-hotfix"
    assert planner.plan(task, context(repository__protected_branches=["main", "release/2.4"])).args["branch"] == (
        "agent/publish-the-hotfix")
    # a pattern that does not match, and a list without the branch, still leave the branch free
    for free in (["main", "release/3.*"], ["main"]):
        assert planner.plan(task, context(repository__protected_branches=free)).args["branch"] == "release/2.4"


def test_playbook_conditions_may_call_the_contracts_functions():
    text = """
name: t
families:
  f:
    rules:
      - when: 'glob_match(param.name, "v*") && path_within("/w/app/x", "/w/app")'
        stop: matched
      - stop: not matched
"""
    planner = RulePlanner(load_playbook_text(text, "<test>"))
    assert planner.plan(Task(text="t", scope=SCOPE, family="f", params={"name": "v1"}), PlanningContext()).reason == (
        "matched")
    assert planner.plan(Task(text="t", scope=SCOPE, family="f", params={"name": "x1"}), PlanningContext()).reason == (
        "not matched")

