"""Normalized actions and the action distance (a metric)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from statewise.actions import Action, action_distance

values = st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(["main", "dev", "origin"]))
actions = st.builds(
    Action,
    tool=st.sampled_from(["git", "pip"]),
    operation=st.sampled_from(["git.push", "git.checkout", "pip.install", "stop"]),
    target=st.none() | st.sampled_from(["origin/main", "origin/dev"]),
    args=st.dictionaries(st.sampled_from(["force", "branch", "remote", "n"]), values, max_size=4),
    scope=st.none() | st.sampled_from(["repo:a@main", "repo:a"]),
    risk=st.none() | st.sampled_from(["low", "high"]),
)


@given(actions)
def test_distance_to_itself_is_zero(a):
    assert action_distance(a, a).distance == 0.0 and action_distance(a, a).same


@given(actions, actions)
def test_distance_is_symmetric_and_bounded(a, b):
    ab, ba = action_distance(a, b), action_distance(b, a)
    assert ab.distance == ba.distance
    assert 0.0 <= ab.distance <= 1.0
    assert set(ab.changed) == set(ba.changed)


@given(actions, actions)
def test_zero_distance_means_equal_on_every_compared_property(a, b):
    if action_distance(a, b).same:
        assert (a.operation, a.target, a.args, a.scope, a.risk) == (b.operation, b.target, b.args, b.scope, b.risk)


@given(actions, actions, actions)
def test_triangle_inequality(a, b, c):
    assert action_distance(a, c).distance <= action_distance(a, b).distance + action_distance(b, c).distance + 1e-9


def test_changed_names_the_differing_properties():
    force = Action(tool="git", operation="git.push", target="origin/main", args={"branch": "main", "force": True})
    feature = Action(tool="git", operation="git.push", target="origin/f", args={"branch": "f"})
    difference = action_distance(force, feature)
    assert difference.changed == ("target", "args.branch", "args.force")
    assert 0 < difference.distance < 0.5
    assert action_distance(force, feature, ignore_args=["branch", "force"]).changed == ("target",)


def test_stop_is_an_action():
    stop = Action.stop("nothing safe to do")
    assert stop.is_stop and stop.describe() == "stop: nothing safe to do"


@pytest.mark.parametrize("bad", [{"--force": True}, {"": 1}, {"a b": 1}])
def test_argument_names_are_plain(bad):
    with pytest.raises(ValidationError):
        Action(tool="git", operation="git.push", args=bad)


def test_unknown_fields_and_risks_are_rejected():
    with pytest.raises(ValidationError):
        Action(tool="git", operation="git.push", risk="extreme")
    with pytest.raises(ValidationError):
        Action.model_validate({"tool": "git", "operation": "git.push", "command": "git push"})
