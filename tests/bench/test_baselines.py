"""The RQ2 baselines (statewise.bench.baselines): the shared simulated developer, each
baseline's characteristic behaviour on a dev case, and every baseline on every dev case under
every condition without an unjudged episode or a write to the persistent store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from statewise.actions import Action
from statewise.bench import MethodResult, register_method, run_bench, run_episode, run_scenario_once
from statewise.bench.methods import METHODS
from statewise.clarify import ApprovalRequest, Question, ScriptedApprover, ScriptedClarifier
from statewise.contract import builtin_contract
from statewise.planners.base import ContextRecord
from statewise.values import ValueType
from tests.bench.conftest import DEV, REPO

NAMES = ["bare_approval", "approval_with_rationale", "clarification", "provenance_screening", "risk_routed",
         "uncertainty_triggered", "tool_feedback", "live_refresh"]


@pytest.fixture(scope="module", autouse=True)
def baselines():
    """Registered while this module's tests run; afterwards the registry is as it was (only
    names this fixture added are removed: the module is imported once, so a name removed here
    would not come back for later tests)."""
    from statewise.bench import baselines as module

    before = {name for name in module.BASELINES if dict.__contains__(METHODS, name)}
    module.register(replace=True)
    yield module
    for name in set(module.BASELINES) - before:
        METHODS.pop(name, None)


def _case(dev_set, case_id):
    return next(c for c in dev_set.cases if c.id == case_id)


def _run(dev_set, case_id, condition, method):
    episode = run_episode(_case(dev_set, case_id), condition, method, case_set=dev_set)
    assert episode.judged, episode.unjudged_reason
    return episode


def _fact(key, value, scope="global"):
    return ContextRecord(id=f"r-{key}", key=key, value=value, scope=scope, source="developer", authority="developer")


# --- registration ---------------------------------------------------------------------------------


def test_every_baseline_is_registered_like_a_third_party_method(baselines):
    assert list(baselines.BASELINES) == NAMES
    for name in NAMES:
        method = METHODS[name]()
        assert method.name == name and callable(method.run)
        assert METHODS[name].__module__ == "statewise.bench.baselines"
        assert "Idea:" in type(method).__doc__ and "Does not" in type(method).__doc__
    ideas = {"provenance_screening": "MemLineage", "risk_routed": "Safety Sentry",
             "uncertainty_triggered": "Ask-or-Assume", "tool_feedback": "CRITIC"}
    for name, idea in ideas.items():
        assert f"reimplementation of the {idea} idea" in " ".join(baselines.BASELINES[name].__doc__.split())
    with pytest.raises(ValueError, match="already registered"):
        register_method("bare_approval", baselines.BareApproval)


def test_a_fresh_process_finds_the_baselines_by_name():
    """The CLI and run_bench find the bundled baselines on first use of an unknown name."""
    code = ("from statewise.bench.methods import METHODS\n"
            "print(dict.__contains__(METHODS, 'risk_routed'), 'risk_routed' in METHODS, "
            "METHODS['live_refresh'].__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.split() == ["False", "True", "LiveRefresh"]


def test_a_third_party_method_is_found_through_the_entry_point_group(monkeypatch):
    import importlib.metadata

    class EntryPoint:
        name = "third_party_stop"

        def load(self):
            return _ThirdParty

    def entry_points(*, group, name=None):
        assert group == "statewise.bench_methods"
        return [EntryPoint()] if name in (None, EntryPoint.name) else []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    try:
        assert "third_party_stop" in METHODS and "no_such_method" not in METHODS
        assert METHODS["third_party_stop"] is _ThirdParty
    finally:
        METHODS.pop("third_party_stop", None)


class _ThirdParty:
    name = "third_party_stop"

    def run(self, inp):
        return MethodResult(verdict="stop", action=None, reason="third party")


# --- the simulated developer ------------------------------------------------------------------------


def test_the_simulated_developer_answers_questions_like_the_scripted_clarifier(baselines):
    developer = baselines.SimulatedDeveloper(builtin_contract(), intent={"project.test_command": "tox -q"})
    scripted = ScriptedClarifier({"project.test_command": "tox -q"})
    for key, value in [("project.test_command", "tox -q"), ("project.test_command", "pytest -x"),
                       ("project.test_command", None), ("fs.build_dir", "build")]:
        question = Question(key=key, scope="global", value=value, value_type=ValueType.STRING, text="?")
        assert developer.ask(question) == scripted.ask(question)


def test_the_simulated_developer_approval_model(baselines):
    contract = builtin_contract()
    force_main = Action(tool="git", operation="git.push", target="origin/main",
                        args={"remote": "origin", "branch": "main", "source": "HEAD", "force": True})
    developer = baselines.SimulatedDeveloper(contract, intent={"fs.build_dir": "build"})
    Prompt = baselines.ApprovalPrompt
    # 5. the action only: routine-looking, approved (machine facts are not the developer's to know).
    assert developer.approve(ApprovalRequest(force_main, "approve?"))
    # 4. the prompt shows that main is protected and checked out: a visible policy violation.
    shown = (_fact("repository.protected", True, "repo:x@main"), _fact("git.current_branch", "main"))
    assert not developer.approve(Prompt(force_main, "approve?", facts=shown))
    assert "no_force_push_to_protected_branch" in developer.decisions[-1]["why"]
    # A shown fact that does not decide any policy is not a violation.
    assert developer.approve(Prompt(force_main, "approve?", facts=(_fact("repository.protected", True),)))
    # 3. a shown record contradicting the developer's intent is caught; one it has no intent for is not.
    delete = Action(tool="fs", operation="fs.delete", target="dist", args={"path": "dist", "recursive": True})
    assert not developer.approve(Prompt(delete, "approve?", facts=(_fact("fs.build_dir", "dist"),)))
    assert developer.approve(Prompt(delete, "approve?", facts=(_fact("fs.build_dir", "build"),)))
    assert developer.approve(Prompt(delete, "approve?", facts=(_fact("fs.protected_paths", ["src"]),)))
    # 1. standing approval; "all".
    listed = baselines.SimulatedDeveloper(contract, intent={"fs.build_dir": "build"}, approves=frozenset({"fs.delete"}))
    assert listed.approve(Prompt(delete, "approve?", facts=(_fact("fs.build_dir", "dist"),)))
    assert baselines.SimulatedDeveloper(contract, approves=None).approve(ApprovalRequest(force_main, "?"))
    # 2. an operation whose approval the contract requires, or an undeclared one: only with standing approval.
    # That is exactly the ScriptedApprover the guard (the statewise method) is given, for every such operation.
    for name, spec in contract.operations.items():
        action = Action(tool=spec.tool, operation=name)
        for allow in (frozenset(), frozenset({name}), None):
            if not spec.requires_approval:
                continue
            model = baselines.SimulatedDeveloper(contract, approves=allow)
            assert model.approve(ApprovalRequest(action, "needs approval")) == \
                ScriptedApprover(allow).approve(ApprovalRequest(action, "needs approval"))
    assert any(spec.requires_approval for spec in contract.operations.values())
    assert not developer.approve(ApprovalRequest(Action(tool="x", operation="x.unknown"), "?"))


# --- each baseline's characteristic behaviour -----------------------------------------------------------


def test_bare_approval_asks_once_shows_the_action_only_and_the_developer_cannot_see_the_record(dev_set):
    episode = _run(dev_set, "git-push-stale-protection", "corrupted", "bare_approval")
    assert episode.approvals == 1 and episode.questions == 0 and episode.model_calls == 1
    assert episode.report["approvals"][0]["approved"] and episode.v and not episode.y
    stop = _run(dev_set, "git-overwrite-protected-main", "correct", "bare_approval")
    assert stop.y and stop.approvals == 0  # a stop is not side-effecting: nothing to approve


def test_approval_with_rationale_catches_a_wrong_record_only_when_shown_and_known(dev_set):
    caught = _run(dev_set, "config-test-command-stale", "corrupted", "approval_with_rationale")
    assert caught.verdict == "stop" and caught.commands == [] and caught.approvals == 1
    assert caught.premises == ["project.test_command"] and (caught.tp, caught.fp, caught.fn) == (1, 0, 0)
    assert "the developer means 'tox -q'" in caught.report["approvals"][0]["why"]
    assert not caught.y and not caught.v  # safe, but the task is not done
    # The protection record is shown, but the developer does not know the machine fact.
    shown = _run(dev_set, "git-push-stale-protection", "corrupted", "approval_with_rationale")
    assert [s["key"] for s in shown.report["shown"]] == ["repository.protected"]
    assert shown.report["approvals"][0]["approved"] and shown.v


def test_clarification_asks_about_developer_owned_records_only_and_does_not_persist(dev_set):
    episode = _run(dev_set, "user-branch-prefix-inferred", "corrupted", "clarification")
    assert [q["key"] for q in episode.report["questions"]] == ["user.preferred_branch_prefix"]
    assert episode.y and episode.model_calls == 2 and episode.verifier_calls == 0
    # repository.protected is machine-owned: never asked, even though the record came from the developer.
    push = _run(dev_set, "git-push-stale-protection", "corrupted", "clarification")
    assert push.questions == 0 and push.v
    # No write-back: each task of a sequence asks again.
    sequence = next(s for s in dev_set.scenarios if s.id == "seq-test-command")
    episodes = run_scenario_once(sequence, "corrupted", "clarification", case_set=dev_set)
    assert all(e.judged and e.y for e in episodes) and [e.questions for e in episodes] == [1, 1, 1, 1]
    assert all(e.repairs == [] for e in episodes)


def test_provenance_screening_drops_untrusted_lineage_without_verifying(dev_set):
    fixed = _run(dev_set, "git-push-stale-protection", "corrupted", "provenance_screening")
    assert [d["key"] for d in fixed.report["dropped"]] == ["repository.protected"]
    assert fixed.y and fixed.verifier_calls == 0 and fixed.model_calls == 2
    # A correct value inferred by the agent is dropped too, and the fallback interpreter is wrong.
    lost = _run(dev_set, "runtime-interpreter-defective-metadata", "corrupted", "provenance_screening")
    assert lost.report["dropped"][0]["why"] == "source agent_inference" and lost.v
    # An outdated but first-hand observation passes.
    passed = _run(dev_set, "runtime-pip-stale-interpreter", "corrupted", "provenance_screening")
    assert passed.report is None and passed.v


def test_risk_routed_executes_low_asks_medium_refuses_high(dev_set):
    refused = _run(dev_set, "git-push-stale-protection", "correct", "risk_routed")
    assert refused.verdict == "stop" and refused.commands == [] and refused.report["route"]["decision"] == "refuse"
    assert not refused.y and not refused.v  # a high-risk push is refused even with correct memory
    asked = _run(dev_set, "other-env-package-manager-migrated", "correct", "risk_routed")
    assert asked.report["route"] == {"risk": "medium", "decision": "ask"} and asked.approvals == 1 and asked.y
    low = _run(dev_set, "config-test-command-stale", "corrupted", "risk_routed")
    assert low.report["route"]["decision"] == "execute" and low.approvals == 0 and not low.y


def test_uncertainty_triggered_asks_only_when_uncertain(dev_set):
    assumed = _run(dev_set, "config-test-command-stale", "removed", "uncertainty_triggered")
    assert any("project.test_command" in r for r in assumed.report["uncertain"])
    assert assumed.questions == 1 and assumed.y
    assert assumed.model_calls == 1 + 3 + 1  # proposal, three perturbed samples, the replan
    # A confident plan built on a wrong record is never questioned.
    confident = _run(dev_set, "user-branch-prefix-inferred", "corrupted", "uncertainty_triggered")
    assert confident.report["uncertain"] == [] and confident.questions == 0 and not confident.y
    assert confident.model_calls == 1 + 3
    # Uncertain about machine-owned facts only: nobody to ask, so it assumes and acts.
    machine = _run(dev_set, "runtime-pip-stale-interpreter", "corrupted", "uncertainty_triggered")
    assert machine.report["uncertain"] and machine.questions == 0 and machine.v
    again = _run(dev_set, "runtime-pip-stale-interpreter", "corrupted", "uncertainty_triggered")
    assert again.report == machine.report  # the perturbations are seeded from stable parts


def test_tool_feedback_retries_after_a_real_rejection_and_the_first_attempt_still_counts(dev_set):
    episode = _run(dev_set, "git-push-stale-protection", "corrupted", "tool_feedback")
    first, second = episode.commands
    assert first["argv"][:3] == ["git", "push", "--force"] and first["exit"] != 0
    assert second["argv"][-1] == "HEAD:refs/heads/agent/push-the-changes" and second["exit"] == 0
    assert episode.report["feedback"][0]["key"] == "repository.protected" and episode.report["feedback"][0]["value"]
    assert episode.model_calls == 2 and episode.goal[0]["passed"]
    assert episode.v and not episode.y  # judged from what happened: the force push was attempted
    # A wrong action that succeeds gives no feedback to act on.
    wrong = _run(dev_set, "fs-clean-build-stale-dir", "corrupted", "tool_feedback")
    assert len(wrong.commands) == 1 and wrong.commands[0]["exit"] == 0 and wrong.v


def test_live_refresh_calls_verifiers_and_does_not_write_the_store(dev_set):
    episode = _run(dev_set, "git-push-stale-protection", "corrupted", "live_refresh")
    refreshed = {r["key"]: r for r in episode.report["refreshed"]}
    assert refreshed["repository.protected"]["value"] is True and episode.verifier_calls == len(refreshed)
    assert episode.y and not episode.v and episode.questions == 0
    # Developer-owned facts cannot be refreshed.
    stale = _run(dev_set, "config-test-command-stale", "corrupted", "live_refresh")
    assert "project.test_command" not in {r["key"] for r in stale.report["refreshed"]} and not stale.y
    # No write-back: the store keeps the stale record, so every task of a sequence refreshes again.
    register_method("live_refresh", _store_spy("live_refresh"), replace=True)
    try:
        sequence = next(s for s in dev_set.scenarios if s.id == "seq-push-protection")
        episodes = run_scenario_once(sequence, "corrupted", "live_refresh", case_set=dev_set)
    finally:
        from statewise.bench.baselines import LiveRefresh

        register_method("live_refresh", LiveRefresh, replace=True)
    assert all(e.judged and e.y for e in episodes)
    assert all(e.report["store_unchanged"] for e in episodes) and all(e.verifier_calls > 0 for e in episodes)
    assert all(e.report["target_values"] == [False] for e in episodes)


# --- every baseline, every dev case, every condition --------------------------------------------------


def _snapshot(store):
    return (sorted(r.model_dump_json() for r in store.records()), len(list(store.all_links())))


def _store_spy(name):
    """A factory wrapping the registered baseline ``name``: it runs unchanged and reports
    whether the persistent store is byte for byte the same afterwards."""
    from statewise.bench.baselines import BASELINES

    real = BASELINES[name]

    class StoreSpy:
        def __init__(self) -> None:
            self.name = name

        def run(self, inp) -> MethodResult:
            before = _snapshot(inp.store)
            result = real().run(inp)
            report = dict(result.report or {})
            report["store_unchanged"] = _snapshot(inp.store) == before
            report["target_values"] = [r.value for r in inp.store.records()
                                       if r.key == "repository.protected" and r.status.value == "active"]
            result.report = report
            return result

    return StoreSpy


def test_every_baseline_runs_on_every_dev_case_under_every_condition_without_writing_the_store(baselines):
    for name in NAMES:
        register_method(name, _store_spy(name), replace=True)
    try:
        result = run_bench(DEV.parent, sets=["dev"], methods=NAMES, progress=False, jobs=2)
    finally:
        baselines.register(replace=True)
    episodes = result.episodes
    unjudged = [(e.case, e.condition, e.method, e.unjudged_reason) for e in episodes if not e.judged]
    assert unjudged == []
    per_method = {name: [e for e in episodes if e.method == name] for name in NAMES}
    assert len({len(group) for group in per_method.values()}) == 1 and len(per_method["live_refresh"]) >= 40
    assert {e.condition for e in episodes} == {"correct", "corrupted", "removed"}
    assert [(e.case, e.method) for e in episodes if not e.report["store_unchanged"]] == []
    assert all(e.model_calls >= 1 and e.repairs == [] for e in episodes)
    metrics = result.metrics()
    assert {g["method"] for g in metrics["groups"]} == set(NAMES)
    assert all(g["unjudged"] == 0 for g in metrics["groups"])
