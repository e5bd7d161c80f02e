"""No white-box hints by default, the basis setting beside it, and the paper's pipeline."""

from __future__ import annotations

from statewise.actions import Action
from statewise.bench import run_episode
from statewise.bench.methods import PAPER_SETTINGS, WithoutBasis, get_method, planner_for
from statewise.planners.base import PlanningContext, Task, as_plan
from statewise.planners.noisy import NoisyPlanner
from statewise.planners.rules import RulePlanner
from statewise.scopes import TaskScope


def test_without_basis_strips_the_hint_and_keeps_sampling_and_feedback_reading():
    class Hinting:
        name = "hinting"
        stochastic = False

        def plan(self, task, context):
            return Action.stop("memory says the branch is protected", basis=["repository.protected"])

    task = Task(text="t", scope=TaskScope(user="dev"))
    raw = as_plan(Hinting().plan(task, PlanningContext.of([])))
    assert raw.action.basis == ("repository.protected",)
    stripped = as_plan(WithoutBasis(Hinting()).plan(task, PlanningContext.of([])))
    assert stripped.action.basis is None and stripped.action.reason == raw.action.reason
    assert WithoutBasis(Hinting()).name == "hinting" and not WithoutBasis(Hinting()).stochastic
    assert WithoutBasis(NoisyPlanner(RulePlanner(), noise=0.1)).stochastic
    assert WithoutBasis(Hinting()).read_feedback("a.b was 1, now 2", "s")[0].value == 2


def test_only_a_white_box_method_gets_the_planner_with_basis():
    planner = RulePlanner()
    for name in ("agent", "statewise", "paper", "hook", "no_gate"):
        assert isinstance(planner_for(get_method(name), planner), WithoutBasis), name
    assert planner_for(get_method("statewise_basis"), planner) is planner


def test_the_paper_method_runs_the_guard_with_the_papers_settings():
    paper, ours = get_method("paper"), get_method("statewise")
    assert PAPER_SETTINGS == {"verify_from_risk": None, "examine_stops": False}
    assert paper.config.verify_from_risk is None and not paper.config.examine_stops and not paper.config.disabled
    assert ours.config.verify_from_risk == "medium" and ours.config.examine_stops
    assert not paper.white_box and get_method("statewise_basis").white_box


def test_a_stop_the_paper_pipeline_does_not_examine_stands(dev_set):
    # A wrong "protected" record makes the planner stop a delete that should run: the full
    # guard examines the stop and repairs the record; the paper's pipeline lets the stop stand.
    case = next(c for c in dev_set.cases if c.id == "git-delete-branch-other-repo-protection")
    ours = run_episode(case, "corrupted", "statewise_basis", case_set=dev_set)
    paper = run_episode(case, "corrupted", "paper", case_set=dev_set)
    assert ours.judged and paper.judged
    assert paper.verdict == "stop" and not paper.y and paper.premises is None
    assert ours.y


def test_statewise_core_keeps_the_sets_keys_operations_and_commands_but_only_the_coding_invariants():
    from statewise.bench.case import load_cases
    from statewise.bench.methods import core_invariants_contract
    from statewise.contract import builtin_contract
    from tests.bench.conftest import DEV

    primary = load_cases(DEV.parent / "primary")
    full = primary.contract
    core = core_invariants_contract(str(primary.contract_path), full)
    coding = {i.name for i in builtin_contract().invariants}
    assert {i.name for i in core.invariants} == coding < {i.name for i in full.invariants}
    assert dict(core.state) == dict(full.state) and dict(core.operations) == dict(full.operations)
    assert dict(core.commands) == dict(full.commands) and dict(core.verifiers) == dict(full.verifiers)
    assert core_invariants_contract(None, builtin_contract()) is builtin_contract()
    # Removed memory: the set's node_install_uses_pinned_version invariant makes the full guard
    # observe the pin; with the coding invariants alone the planner's `--lts` goes through.
    case = next(c for c in primary.cases if c.id == "pri-rt-node-pin-wrong-01")
    ours = run_episode(case, "removed", "statewise", case_set=primary)
    core_only = run_episode(case, "removed", "statewise_core", case_set=primary)
    assert ours.judged and core_only.judged and ours.y and not core_only.y
