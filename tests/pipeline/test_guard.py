"""The guard end to end, on real git repositories whose origin really enforces protection."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.actions import Action
from statewise.clarify import Answer, CallbackClarifier, ScriptedApprover, ScriptedClarifier
from statewise.contract import builtin_contract
from statewise.errors import PlannerError
from statewise.execute import run_action
from statewise.pipeline import Guard, GuardConfig, PremiseStatus, Verdict
from statewise.planners.base import CallablePlanner, Task
from statewise.planners.rules import RulePlanner
from statewise.records import Provenance, RecordDraft, RecordStatus
from statewise.sandbox import GitSandbox
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

DEV = Provenance(source="developer", authority="developer", actor="dev")
LONG_AGO = datetime.now(UTC) - timedelta(days=40)


def _task(sandbox: GitSandbox, text: str = "push the changes", **extra) -> Task:
    return Task(text=text, scope=derive_task_scope(sandbox.work, user="dev"), **extra)


def _stale_unprotected(store, sandbox) -> str:
    return store.put(RecordDraft(key="repository.protected", value=False, scope=f"repo:{sandbox.repo_identity}@main",
                                 provenance=DEV, observed_at=LONG_AGO)).id


def test_figure1_force_push_is_repaired_replanned_and_the_repair_is_reused(store, sandbox):
    record_id = _stale_unprotected(store, sandbox)
    store.put(RecordDraft(key="runtime.python_version", value="3.11", scope="global", provenance=DEV))
    main_before = sandbox.remote_ref("main")
    guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work)

    decision = guard.check(_task(sandbox))

    report = decision.report
    assert report.proposal.args["force"] is True and report.proposal.args["branch"] == "main"
    assert decision.verdict is Verdict.EXECUTE
    assert decision.action.args["branch"] == "agent/push-the-changes" and "force" not in decision.action.args
    critical = [c for c in report.candidates if c.record_id == record_id]
    assert critical and critical[0].dependent and critical[0].premise
    assert all(c.key != "runtime.python_version" for c in report.candidates)
    premise = next(p for p in report.premises if p.record_id == record_id)
    assert premise.status is PremiseStatus.DEFECTIVE and premise.route == "verifier"
    assert premise.evidence.value is True and premise.evidence.scope == f"repo:{sandbox.repo_identity}@main"
    [repair] = [r for r in report.repairs if r.kind == "supersede"]
    assert store.get(record_id).status is RecordStatus.SUPERSEDED
    assert store.get(repair.new_record_id).value is True
    assert [link.kind.value for link in store.lineage(record_id).links] == ["supersede"]
    assert json.loads(report.model_dump_json())["verdict"] == "execute"

    outcome = run_action(decision.action, sandbox.work)
    assert outcome.ok, outcome.stderr
    assert sandbox.remote_ref("main") == main_before
    assert sandbox.remote_ref("agent/push-the-changes") == sandbox.head()

    second = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(
        _task(sandbox, "push the follow-up work"))
    reused = next(p for p in second.report.premises if p.key == "repository.protected")
    assert reused.route == "reliability" and reused.status is PremiseStatus.VALID
    assert second.report.proposal.args["branch"] == "agent/push-the-follow-up-work"
    assert second.verdict is Verdict.EXECUTE
    assert second.report.repairs == [] or all(r.kind == "learn" for r in second.report.repairs)


def test_correct_memory_needs_no_repair(store, sandbox):
    store.put(RecordDraft(key="repository.protected", value=True, scope=f"repo:{sandbox.repo_identity}@main",
                          provenance=Provenance(source="observation", authority="machine",
                                                actor="git.branch_protection")))
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(_task(sandbox))
    assert decision.verdict is Verdict.EXECUTE
    assert not [r for r in decision.report.repairs if r.kind in ("supersede", "narrow")]
    assert decision.report.replanned is None


def test_hook_mode_without_planner_stops_and_repairs(store, sandbox):
    record_id = _stale_unprotected(store, sandbox)
    force = Action(tool="git", operation="git.push", target="origin/main",
                   args={"remote": "origin", "branch": "main", "source": "HEAD", "force": True})
    decision = Guard(store, workspace=sandbox.work).check(_task(sandbox), force)
    assert decision.verdict is Verdict.STOP and decision.action is None
    assert "state_action_agreement" in decision.report.blocked_by
    assert any(name.startswith("invariant:no_force_push") for name in decision.report.blocked_by)
    assert "repository.protected" in decision.reason
    assert store.get(record_id).status is RecordStatus.SUPERSEDED  # the record is fixed for next time


def test_unobservable_premise_is_unresolved_and_blocks(store, sandbox):
    record_id = _stale_unprotected(store, sandbox)
    shutil.rmtree(sandbox.origin)  # the remote is gone: protection cannot be observed
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(_task(sandbox))
    assert decision.verdict is Verdict.STOP
    assert "premises_resolved" in decision.report.blocked_by
    assert "repository.protected" in decision.reason
    premise = next(p for p in decision.report.premises if p.record_id == record_id)
    assert premise.status is PremiseStatus.UNRESOLVED and premise.missing
    assert store.get(record_id).status is RecordStatus.ACTIVE  # nothing is written on a guess


def _test_command_record(store, sandbox, value="pytest -x"):
    return store.put(RecordDraft(key="project.test_command", value=value, scope="global", provenance=DEV,
                                 observed_at=LONG_AGO)).id


def test_developer_intent_is_asked_and_the_correction_is_narrowed(store, sandbox, tmp_path):
    record_id = _test_command_record(store, sandbox)
    developer = ScriptedClarifier({"project.test_command": "tox -q"})
    guard = Guard(store, planner=RulePlanner(), clarifier=developer, workspace=sandbox.work)
    decision = guard.check(_task(sandbox, "run the tests"))
    assert decision.verdict is Verdict.EXECUTE
    assert decision.action.args["command"] == "tox -q"
    [question] = developer.asked
    assert question.key == "project.test_command" and question.value == "pytest -x"
    assert question.scope == f"repo:{sandbox.repo_identity}" and "pytest -x" in question.text
    assert decision.report.costs.clarification_questions == 1
    # The global record was over-general: narrowed to this repository, kept elsewhere.
    assert store.get(record_id).status is RecordStatus.ACTIVE
    assert store.get_active("project.test_command", f"repo:{sandbox.repo_identity}").value == "tox -q"


def test_developer_intent_without_a_channel_stops_with_the_question(store, sandbox):
    _test_command_record(store, sandbox)
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(_task(sandbox, "run the tests"))
    assert decision.verdict is Verdict.STOP
    assert "What command runs the tests" in decision.reason


def test_an_unknown_answer_leaves_the_premise_unresolved(store, sandbox):
    record_id = _test_command_record(store, sandbox)
    guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work,
                  clarifier=CallbackClarifier(lambda q: Answer.unknown(note="not sure")))
    decision = guard.check(_task(sandbox, "run the tests"))
    assert decision.verdict is Verdict.STOP and "not sure" in decision.reason
    assert store.get(record_id).status is RecordStatus.ACTIVE


def test_a_planner_that_raises_on_probes_leaves_bound_records_inconclusive_but_verified(store, sandbox):
    record_id = _stale_unprotected(store, sandbox)
    rules = RulePlanner()
    calls = {"n": 0}

    def flaky(task, state):
        calls["n"] += 1
        if calls["n"] > 1 and "repository.protected" not in state:
            raise RuntimeError("model timeout")
        from statewise.planners.base import ContextRecord, PlanningContext

        context = PlanningContext.of(ContextRecord(id=k, key=k, value=v, scope="global", source="developer",
                                                   authority="developer") for k, v in state.items())
        return rules.plan(task, context)

    decision = Guard(store, planner=CallablePlanner(flaky), workspace=sandbox.work).check(_task(sandbox))
    candidate = next(c for c in decision.report.candidates if c.record_id == record_id)
    assert candidate.premise
    assert any(p.error for p in candidate.probes)
    assert store.get(record_id).status is RecordStatus.SUPERSEDED


def test_a_planner_that_fails_to_propose_is_a_safe_stop(store, sandbox):
    def broken(task, state):
        raise PlannerError("broken", "no answer")

    decision = Guard(store, planner=CallablePlanner(broken), workspace=sandbox.work).check(_task(sandbox))
    assert decision.verdict is Verdict.STOP and decision.report.failed_stage == "planning"


def test_a_failing_stage_is_a_safe_stop_naming_the_stage(sandbox, tmp_path):
    store = SQLiteStore(tmp_path / "s.db", key_schema=builtin_contract())
    store.close()  # every store call now fails
    force = Action(tool="git", operation="git.push", args={"remote": "origin", "branch": "main", "force": True})
    decision = Guard(store, workspace=sandbox.work).check(_task(sandbox), force)
    assert decision.verdict is Verdict.STOP and decision.report.failed_stage == "retrieval"
    assert "stage retrieval failed" in decision.reason


def test_unknown_operations_never_pass(store, sandbox):
    action = Action(tool="shell", operation="shell.run", args={"command": "make deploy"})
    decision = Guard(store, workspace=sandbox.work).check(_task(sandbox), action)
    assert decision.verdict is Verdict.STOP and "operation_declared" in decision.report.blocked_by


def test_approval_is_asked_before_execution_where_the_contract_demands_it(store, sandbox):
    reset = Action(tool="git", operation="git.reset_hard", args={"ref": "origin/main"})
    assert Guard(store, workspace=sandbox.work).check(_task(sandbox, "reset"), reset).verdict is Verdict.STOP
    denying = ScriptedApprover(allow=frozenset())
    decision = Guard(store, workspace=sandbox.work, approver=denying).check(_task(sandbox, "reset"), reset)
    assert decision.verdict is Verdict.STOP and len(denying.requests) == 1
    approving = ScriptedApprover()
    decision = Guard(store, workspace=sandbox.work, approver=approving).check(_task(sandbox, "reset"), reset)
    assert decision.verdict is Verdict.EXECUTE and decision.report.costs.approvals_asked == 1


@pytest.mark.parametrize(
    ("ablation", "verdict", "record_fixed"),
    [
        ("no_repair", Verdict.EXECUTE, False),  # corrected in context only, the store keeps the bad record
        ("no_replan", Verdict.STOP, True),  # repaired, but the old force push reaches the gate
        ("no_resolution", Verdict.STOP, False),  # trusted as stored; the gate's own state blocks it
        ("no_gate", Verdict.EXECUTE, True),
    ],
)
def test_ablations_switch_off_their_stage(store, sandbox, ablation, verdict, record_fixed):
    record_id = _stale_unprotected(store, sandbox)
    guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work, config=GuardConfig.ablation(ablation))
    decision = guard.check(_task(sandbox))
    assert decision.verdict is verdict, decision.reason
    assert decision.report.disabled_stages == [ablation[3:]]
    assert (store.get(record_id).status is RecordStatus.SUPERSEDED) is record_fixed


def test_no_attribution_misses_the_premise_but_the_gate_resolves_what_its_invariants_read(store, sandbox):
    record_id = _stale_unprotected(store, sandbox)
    guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work, config=GuardConfig.ablation("no_attribution"))
    decision = guard.check(_task(sandbox))
    assert not any(c.premise for c in decision.report.candidates if c.record_id == record_id)
    # The gate resolved repository.protected because an invariant reads it, repaired it, and the
    # planner replanned from the changed store; the force push never ran.
    gate_premise = next(p for p in decision.report.premises if p.record_id == record_id)
    assert gate_premise.status is PremiseStatus.DEFECTIVE
    assert store.get(record_id).status is RecordStatus.SUPERSEDED
    assert decision.verdict is Verdict.EXECUTE and "force" not in decision.action.args


def test_missing_machine_facts_are_learned_and_the_plan_is_redone(store, sandbox):
    (sandbox.work / "requirements.txt").write_text("requests\n")  # the project uses pip
    task = Task(text="install requests", scope=derive_task_scope(sandbox.work, user="dev"),
                params={"package": "requests"})
    # No memory at all: the agent's default interpreter is `python3`; the gate observes the
    # workspace's real interpreter, learns it, and the planner replans with it.
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(task)
    learned = {r.key: r.new_value for r in decision.report.repairs if r.kind == "learn"}
    assert decision.report.proposal.args["interpreter"] == "python3"
    assert learned["runtime.python_interpreter"].startswith("/") and learned["project.package_manager"] == "pip"
    assert decision.verdict is Verdict.EXECUTE, decision.reason
    assert decision.action.args["interpreter"] == learned["runtime.python_interpreter"]
    assert store.get_active("runtime.python_interpreter", f"workspace:{sandbox.work}") is not None


def test_a_missing_developer_value_an_applicable_invariant_needs_is_asked_for(store, sandbox):
    # The project's files declare `npm test` only, so the planner's default `pytest` is not a
    # test command anyone declared: the developer is asked (with no declaration at all, a
    # test run has nothing to disagree with and is not asked about).
    (sandbox.work / "package.json").write_text('{"scripts": {"test": "jest"}}')
    developer = ScriptedClarifier({"project.test_command": "tox -q"})
    decision = Guard(store, planner=RulePlanner(), clarifier=developer, workspace=sandbox.work).check(
        _task(sandbox, "run the tests"))
    [question] = developer.asked
    assert question.key == "project.test_command" and question.value is None
    assert decision.verdict is Verdict.EXECUTE and decision.action.args["command"] == "tox -q"
    assert store.get_active("project.test_command", f"repo:{sandbox.repo_identity}").value == "tox -q"
    # A push that does not force never asks for force-push permission.
    pusher = ScriptedClarifier({})
    Guard(store, planner=RulePlanner(), clarifier=pusher, workspace=sandbox.work).check(_task(sandbox))
    assert all(q.key != "user.allow_force_push" for q in pusher.asked)


def test_guard_config_rejects_unknown_stages():
    with pytest.raises(ValueError):
        GuardConfig.ablation("no_such_stage")
    with pytest.raises(ValueError):
        GuardConfig(disabled=frozenset({"nothing"}))


def test_the_same_planner_call_is_never_made_twice_in_one_check(store, sandbox):
    _stale_unprotected(store, sandbox)
    seen: list[str] = []
    rules = RulePlanner()

    class Recording:
        name = "recording"

        def plan(self, task, context):
            seen.append(context.fingerprint())
            return rules.plan(task, context)

    Guard(store, planner=Recording(), workspace=sandbox.work).check(_task(sandbox))
    assert len(seen) == len(set(seen))


def test_stop_proposals_pass_through_as_stops(store, sandbox):
    decision = Guard(store, workspace=sandbox.work).check(_task(sandbox), Action.stop("nothing to do"))
    assert decision.verdict is Verdict.STOP and decision.reason.endswith("nothing to do")


def test_report_is_json_serializable_and_complete(store, sandbox, tmp_path: Path):
    _stale_unprotected(store, sandbox)
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(_task(sandbox))
    data = json.loads(decision.report.model_dump_json())
    for field in ("candidates", "premises", "repairs", "replanned", "gate", "costs", "proposal"):
        assert field in data
    assert data["costs"]["planner_calls"] >= 2 and data["costs"]["verifier_calls"] >= 1
    assert data["costs"]["guard_seconds"] <= data["costs"]["wall_seconds"]


def test_a_stochastic_planner_is_sampled_and_disagreement_still_gets_verified(store, sandbox):
    from statewise.planners.noisy import NoisyPlanner

    record_id = _stale_unprotected(store, sandbox)
    noisy = NoisyPlanner(RulePlanner(), noise=0.5, seed=11)
    guard = Guard(store, planner=noisy, workspace=sandbox.work, config=GuardConfig(samples=4))
    decision = guard.check(_task(sandbox), Action(tool="git", operation="git.push", target="origin/main",
                                                  args={"remote": "origin", "branch": "main", "source": "HEAD",
                                                        "force": True}))
    candidate = next(c for c in decision.report.candidates if c.record_id == record_id)
    assert all(len(probe.actions) + (probe.error is not None) >= 1 for probe in candidate.probes)
    assert max(len(probe.actions) for probe in candidate.probes) == 4  # four samples per probe
    assert candidate.premise  # dependent, or inconclusive under disagreement: verified either way
    assert store.get(record_id).status is RecordStatus.SUPERSEDED
    assert decision.action is None or decision.action.args.get("force") is not True
    assert decision.report.planner.startswith("noisy(rules")


def test_the_probe_budget_bounds_planner_calls(store, sandbox):
    _stale_unprotected(store, sandbox)
    guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work, config=GuardConfig(probe_budget=2))
    decision = guard.check(_task(sandbox))
    assert all(len(c.probes) <= 2 for c in decision.report.candidates)
    assert any("budget" in c.note for c in decision.report.candidates)
