"""The wayward planner: it overrules a record its plan relies on, at a seeded rate."""

from __future__ import annotations

import pytest

from statewise.bench.runner import build_planner
from statewise.planners.base import ContextRecord, PlanningContext, Task, samples_stochastically
from statewise.planners.rules import RulePlanner, load_playbook
from statewise.planners.wayward import WaywardPlanner
from statewise.scopes import TaskScope
from tests.bench.conftest import DEV

SCOPE = TaskScope(user="dev", workspace="/w/app", repo="github.com/acme/app", branch="main")
FORCE = {"remote": "origin", "branch": "main", "source": "HEAD", "force": True}


def record(key, value):
    return ContextRecord(id=key, key=key, value=value, scope="global", source="developer", authority="developer")


def unprotected() -> PlanningContext:
    return PlanningContext.of([record("repository.protected", False), record("project.test_command", "pytest")])


def test_rate_zero_obeys_and_rate_one_overrules_the_record_the_plan_relies_on():
    task = Task(text="push the changes", scope=SCOPE)
    assert WaywardPlanner(RulePlanner(), rate=0.0).plan(task, unprotected()).args == FORCE
    wayward = WaywardPlanner(RulePlanner(), rate=1.0)
    # the push relies on repository.protected only; the test command does not change it
    assert wayward.relied_on(task, unprotected()) == ["repository.protected"]
    overruled = wayward.plan(task, unprotected())
    assert "force" not in overruled.args and overruled.args["branch"] == "agent/push-the-changes"


def test_a_record_the_plan_does_not_rely_on_is_never_overruled():
    task = Task(text="push the changes", scope=SCOPE)
    only_unrelated = PlanningContext.of([record("project.test_command", "pytest")])
    wayward = WaywardPlanner(RulePlanner(), rate=1.0)
    assert wayward.relied_on(task, only_unrelated) == []
    assert wayward.plan(task, only_unrelated) == RulePlanner().plan(task, only_unrelated)


def test_the_draw_is_seeded_repeats_exactly_and_varies_between_samples_at_about_the_rate():
    wayward = WaywardPlanner(RulePlanner(), rate=0.3, seed=7)
    assert samples_stochastically(wayward) and wayward.name == "wayward(rules, p=0.3, seed=7)"
    tasks = [Task(text=f"push the changes {n}", scope=SCOPE) for n in range(400)]
    first = [wayward.plan(t, unprotected()).args.get("force", False) for t in tasks]
    assert first == [wayward.plan(t, unprotected()).args.get("force", False) for t in tasks]
    overruled = first.count(False) / len(first)
    assert 0.24 <= overruled <= 0.36, overruled
    samples = {wayward.plan(tasks[0], unprotected().for_sample(s)).args.get("force", False) for s in range(30)}
    assert samples == {True, False}
    other_seed = [WaywardPlanner(RulePlanner(), rate=0.3, seed=8).plan(t, unprotected()).args.get("force", False)
                  for t in tasks]
    assert other_seed != first


def test_the_bench_builds_it_from_a_spec_with_the_sets_playbook():
    playbook = load_playbook(DEV / "playbook.yaml")
    planner = build_planner("wayward:0.25", playbook, seed=3)
    assert isinstance(planner, WaywardPlanner) and planner.rate == 0.25 and planner.seed == 3
    assert "overwrite_branch" in planner.inner.playbook.families
    with pytest.raises(ValueError):
        WaywardPlanner(RulePlanner(), rate=1.5)


def test_the_draw_is_the_same_in_every_sandbox_a_run_builds():
    # A fresh sandbox changes the workspace path, the records' ids, scopes and times in every
    # run; none of that may change which calls overrule a record (a run must be reproducible).
    import tempfile
    from datetime import UTC, datetime

    from statewise.planners.base import seeded_draw

    def draws(root: str, stamp: int) -> list[float]:
        scope = TaskScope(user="dev", workspace=f"{root}/work", repo=f"local{root}/origin", branch="main")
        records = [ContextRecord(id=f"rec_{stamp}_{n}", key="python.venv_path", value=f"{root}/work/.venv",
                                 scope=f"repo:local{root}/origin", source="developer", authority="developer",
                                 observed_at=datetime.fromtimestamp(stamp + n, UTC)) for n in range(2)]
        context = PlanningContext.of(records)
        task = Task(text="install requests", scope=scope, workspace=f"{root}/work", id="case-1",
                    params={"path": f"{root}/work/src"})
        return [seeded_draw("wayward", 0, task, context.for_sample(s)).random() for s in range(5)]

    tmp = tempfile.gettempdir()
    assert draws(f"{tmp}/statewise-k3j2l1x9/ep-case-1-agent-ac1a0daf", 1_000) == \
        draws(f"{tmp}/statewise-p0q9w8e7/ep-case-1-agent-5b9b77d7", 2_000)
    assert draws(f"{tmp}/statewise-k3j2l1x9", 1_000) != draws("/srv/elsewhere", 1_000)  # a real path still counts
