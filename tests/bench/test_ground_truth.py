"""No method sees the ground truth, and a method that raises is a counted failure."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from statewise.bench import MethodInput, MethodResult, load_case, register_method, run_episode
from statewise.bench.case import Scenario, Step
from statewise.bench.methods import METHODS, propose
from statewise.bench.metrics import aggregate
from tests.bench.conftest import minimal_case, write_case

#: What the runner judges an episode by; none of it may reach a method.
GROUND_TRUTH = ("step", "scenario", "case", "critical", "expected", "goal", "invariants", "category", "defect")


def test_method_input_has_no_ground_truth_field():
    names = {f.name for f in dataclasses.fields(MethodInput)}
    assert names.isdisjoint(GROUND_TRUTH), names & set(GROUND_TRUTH)


def _reachable(value, seen, depth=0):
    """Every object reachable from ``value`` through attributes, dataclass fields, mappings and sequences."""
    if id(value) in seen or depth > 6 or isinstance(value, (str, bytes, int, float, bool, type(None))):
        return
    seen[id(value)] = value
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = list(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        children = [getattr(value, f.name) for f in dataclasses.fields(value)]
    else:
        children = []
    for child in children:
        _reachable(child, seen, depth + 1)


class _Spy:
    """Records what it is given, tries to read the ground truth, then acts like the agent."""

    name = "spy"
    seen: ClassVar[list[MethodInput]] = []
    reads: ClassVar[list[str]] = []

    def run(self, inp):
        _Spy.seen.append(inp)
        for name in GROUND_TRUTH:
            try:
                getattr(inp, name)
            except AttributeError:
                continue
            _Spy.reads.append(name)
        action, calls, tokens = propose(inp)
        return MethodResult.from_proposal(action, model_calls=calls, tokens=tokens)


def test_a_method_in_a_real_episode_cannot_reach_the_ground_truth(tmp_path):
    register_method("test_spy", _Spy, replace=True)
    try:
        case = load_case(write_case(tmp_path / "a", minimal_case()))
        episode = run_episode(case, "corrupted", "test_spy")
    finally:
        METHODS.pop("test_spy")
    assert episode.judged and episode.critical == ["repository.protected"]  # the runner has it ...
    assert _Spy.reads == [] and len(_Spy.seen) == 1  # ... the method cannot read it
    seen: dict[int, object] = {}
    _reachable(_Spy.seen[0], seen)
    # Neither the step nor the scenario (which hold expected, critical, goal and invariants) is
    # reachable from the input's data, nor any check object.
    assert not [v for v in seen.values() if isinstance(v, (Step, Scenario))]
    assert not [v for v in seen.values() if type(v).__module__ == "statewise.bench.checks"]
    assert not [v for v in seen.values() if isinstance(v, dict) and {"goal", "critical"} & set(v)]


class _Raises:
    name = "raises"

    def run(self, inp):
        raise RuntimeError("boom")


def test_a_raising_method_counts_as_a_failure_in_the_rates(tmp_path):
    register_method("test_raises_rate", _Raises, replace=True)
    try:
        case = load_case(write_case(tmp_path / "a", minimal_case()))
        episodes = [run_episode(case, condition, "test_raises_rate") for condition in ("correct", "corrupted")]
    finally:
        METHODS.pop("test_raises_rate")
    assert all(e.judged and not e.y and e.verdict == "error" for e in episodes)
    rows = [r for r in aggregate(episodes, bootstrap=0)["groups"] if r["method"] == "test_raises_rate"]
    assert {r["condition"]: (r["n"], r["unjudged"], r["OC"]) for r in rows} == {
        "correct": (1, 0, 0.0), "corrupted": (1, 0, 0.0)}
