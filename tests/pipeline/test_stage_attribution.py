"""Stage 1, attribution, on its own: which retrieved records a proposal rests on, found by
probing a real planner function with the record removed, masked and changed, over records
read from a real SQLite store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statewise.actions import Action
from statewise.contract import builtin_contract
from statewise.pipeline.attribution import AttributionSettings, attribute, attribute_stop
from statewise.pipeline.calls import CostMeter, PlannerCalls
from statewise.planners.base import CallablePlanner, ContextRecord, PlanningContext, Task
from statewise.records import Provenance, RecordDraft
from statewise.scopes import TaskScope
from statewise.store.sqlite import SQLiteStore

REPO = "github.com/acme/app"
TASK = Task(text="push the changes", scope=TaskScope(user="dev", repo=REPO, branch="main"))
MACHINE = Provenance(source="observation", authority="machine", actor="git")
FORCE_PUSH = Action(tool="git", operation="git.push", target="origin/main",
                    args={"remote": "origin", "branch": "main", "source": "HEAD", "force": True})
BRANCH_PUSH = Action(tool="git", operation="git.push", target="origin/agent/work",
                     args={"remote": "origin", "branch": "agent/work", "source": "HEAD"})


def _records(store: SQLiteStore) -> list:
    """A wrong record the push depends on, and one about the interpreter it does not."""
    store.put(RecordDraft(key="repository.protected", value=False, scope=f"repo:{REPO}@main", provenance=MACHINE))
    store.put(RecordDraft(key="runtime.python_version", value="3.11", scope="global", provenance=MACHINE))
    return store.retrieve(TASK.scope).records


def _context(records) -> PlanningContext:
    return PlanningContext.of(ContextRecord.from_record(record) for record in records)


def _pusher(task: Task, state: Mapping[str, Any]) -> Action:
    """Force-pushes to main only when the context says main is not protected."""
    return FORCE_PUSH if state.get("repository.protected") is False else BRANCH_PUSH


def test_a_record_the_proposal_depends_on_is_a_premise_and_an_unrelated_one_is_not(store):
    records = _records(store)
    meter = CostMeter()
    found = attribute(TASK, FORCE_PUSH, _context(records), records, [], builtin_contract(),
                      PlannerCalls(CallablePlanner(_pusher), meter), AttributionSettings())

    assert found.reproduced is True
    assert [r.key for r in found.premises] == ["repository.protected"]
    [candidate] = [c for c in found.candidates if c.key == "repository.protected"]
    assert candidate.link == "binding" and candidate.bound and candidate.dependent and candidate.premise
    # Removing the record already moves the planner off main: one probe settles dependence.
    assert [p.kind for p in candidate.probes] == ["remove"]
    assert candidate.probes[0].actions == [BRANCH_PUSH] and "args.branch" in candidate.probes[0].changed
    assert "runtime.python_version" not in {c.key for c in found.candidates}
    assert meter.planner_calls == 2  # the unprobed reproduction and the one probe


def test_a_bound_record_the_planner_ignores_is_not_a_premise(store):
    records = _records(store)
    found = attribute(TASK, FORCE_PUSH, _context(records), records, [], builtin_contract(),
                      PlannerCalls(CallablePlanner(lambda task, state: FORCE_PUSH), CostMeter()),
                      AttributionSettings())
    [candidate] = [c for c in found.candidates if c.key == "repository.protected"]
    assert candidate.bound and not candidate.dependent and not candidate.premise
    assert [p.kind for p in candidate.probes] == ["remove", "mask", "alternative"]
    assert candidate.probes[2].alternative is True  # the other value of a bool
    assert found.premises == []


def test_a_failing_planner_leaves_a_bound_record_inconclusive_and_still_a_premise(store):
    records = _records(store)

    def fails_without_the_record(task: Task, state: Mapping[str, Any]) -> Action:
        if "repository.protected" not in state:
            raise RuntimeError("the planner crashed")
        return FORCE_PUSH

    found = attribute(TASK, FORCE_PUSH, _context(records), records, [], builtin_contract(),
                      PlannerCalls(CallablePlanner(fails_without_the_record), CostMeter()), AttributionSettings())
    [candidate] = found.candidates
    assert candidate.inconclusive and candidate.premise and not candidate.dependent
    assert "crashed" in (candidate.probes[0].error or "")


def test_without_counterfactuals_or_a_planner_no_probe_runs(store):
    records = _records(store)
    contract = builtin_contract()
    ablated = attribute(TASK, FORCE_PUSH, _context(records), records, [], contract,
                        PlannerCalls(CallablePlanner(_pusher), meter := CostMeter()),
                        AttributionSettings(counterfactual=False))
    assert meter.planner_calls == 0
    assert all(not c.probes and c.note == "no counterfactual attribution" for c in ablated.candidates)
    blind = attribute(TASK, FORCE_PUSH, _context(records), records, [], contract, None, AttributionSettings())
    [candidate] = blind.candidates
    assert candidate.premise and candidate.inconclusive and "no planner" in candidate.note


def test_a_stop_is_attributed_to_the_record_that_caused_it(store):
    records = _records(store)
    stop = Action(tool="git", operation="stop", reason="main is not protected?", basis=("repository.protected",))

    def stops_on_the_record(task: Task, state: Mapping[str, Any]) -> Action:
        return stop if "repository.protected" in state else BRANCH_PUSH

    found = attribute_stop(TASK, stop, _context(records), records, [], builtin_contract(),
                           PlannerCalls(CallablePlanner(stops_on_the_record), CostMeter()), AttributionSettings())
    assert found.reproduced is True
    assert [r.key for r in found.premises] == ["repository.protected"]
