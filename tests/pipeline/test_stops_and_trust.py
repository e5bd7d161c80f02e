"""Beyond the paper's pipeline: stops caused by records, observing trusted facts before risky
actions, per-user authority, and relocating a mis-scoped record. Real git sandboxes and stores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statewise.clarify import ScriptedClarifier
from statewise.contract import builtin_contract
from statewise.pipeline import Guard, GuardConfig, PremiseStatus, Verdict
from statewise.pipeline.resolution import reliability_findings
from statewise.planners.base import Task
from statewise.planners.rules import RulePlanner, load_playbook_text
from statewise.records import Provenance, RecordDraft, RecordStatus
from statewise.sandbox import GitSandbox, make_git_sandbox
from statewise.workspace import derive_task_scope

MACHINE = Provenance(source="observation", authority="machine", actor="git.branch_protection")
AGENT = Provenance(source="agent_inference", authority="agent", actor="agent")
AN_HOUR_AGO = datetime.now(UTC) - timedelta(hours=1)

# A family that refuses to clean a directory it believes protected (a stop with a basis).
GUARDED_CLEAN = """
name: guarded-clean
families:
  clean_build:
    description: Remove the build output directory unless it is protected.
    match: [clean]
    rules:
      - when: '"fs.build_dir" in state && !(state["fs.build_dir"] in state["fs.protected_paths"])'
        action:
          tool: fs
          operation: fs.delete
          target: "{state:fs.build_dir}"
          args: {path: "{state:fs.build_dir}", recursive: true}
      - when: '"fs.build_dir" in state'
        stop: "{state:fs.build_dir} is a protected path"
      - stop: no build directory is known, so nothing is deleted
"""


@pytest.fixture
def sandbox(tmp_path) -> GitSandbox:
    made = make_git_sandbox(tmp_path / "sandbox")
    (made.work / "build").mkdir()
    (made.work / "build" / "out.o").write_text("object\n")
    return made


def _task(sandbox: GitSandbox, text: str, user: str = "dev") -> Task:
    return Task(text=text, scope=derive_task_scope(sandbox.work, user=user), workspace=str(sandbox.work))


def _repo(sandbox: GitSandbox) -> str:
    return f"repo:{sandbox.repo_identity}"


def _developer(actor: str = "dev") -> Provenance:
    return Provenance(source="developer", authority="developer", actor=actor)


def _clean_guard(store, sandbox, clarifier=None, **config) -> Guard:
    planner = RulePlanner(load_playbook_text(GUARDED_CLEAN, "<test>"))
    return Guard(store, planner=planner, clarifier=clarifier, workspace=sandbox.work,
                 config=GuardConfig(**config))


def test_the_rule_planner_names_the_basis_of_a_stop(store, sandbox):
    store.put(RecordDraft(key="fs.build_dir", value="build", scope=_repo(sandbox), provenance=_developer()))
    store.put(RecordDraft(key="fs.protected_paths", value=["build"], scope=_repo(sandbox), provenance=_developer()))
    decision = _clean_guard(store, sandbox, examine_stops=False).check(_task(sandbox, "clean the build"))
    assert decision.report.proposal.is_stop
    assert set(decision.report.proposal.basis) == {"fs.build_dir", "fs.protected_paths"}


def test_a_stop_caused_by_a_wrong_record_is_repaired_and_the_work_is_done(store, sandbox):
    store.put(RecordDraft(key="fs.build_dir", value="build", scope=_repo(sandbox), provenance=_developer()))
    wrong = store.put(RecordDraft(key="fs.protected_paths", value=["build", "src"], scope=_repo(sandbox),
                                  provenance=AGENT)).id
    developer = ScriptedClarifier({"fs.protected_paths": ["src"]})
    decision = _clean_guard(store, sandbox, developer).check(_task(sandbox, "clean the build"))

    assert decision.report.proposal.is_stop
    assert decision.verdict is Verdict.EXECUTE and decision.action.operation == "fs.delete"
    assert decision.action.args["path"] == "build"
    [question] = developer.asked
    assert question.key == "fs.protected_paths" and question.value == ["build", "src"]
    candidate = next(c for c in decision.report.candidates if c.record_id == wrong)
    assert candidate.link == "stop" and candidate.premise
    assert store.get(wrong).status is RecordStatus.SUPERSEDED
    assert store.get_active("fs.protected_paths", _repo(sandbox)).value == ["src"]


def test_a_stop_on_a_confirmed_record_stands(store, sandbox):
    store.put(RecordDraft(key="fs.build_dir", value="build", scope=_repo(sandbox), provenance=_developer()))
    store.put(RecordDraft(key="fs.protected_paths", value=["build"], scope=_repo(sandbox), provenance=AGENT))
    developer = ScriptedClarifier({"fs.protected_paths": ["build"]})
    decision = _clean_guard(store, sandbox, developer).check(_task(sandbox, "clean the build"))
    assert decision.verdict is Verdict.STOP
    assert "fs.protected_paths" in decision.reason and "(valid)" in decision.reason
    assert len(developer.asked) == 1


def test_without_stop_examination_a_stop_stands_unexamined(store, sandbox):
    store.put(RecordDraft(key="fs.build_dir", value="build", scope=_repo(sandbox), provenance=_developer()))
    store.put(RecordDraft(key="fs.protected_paths", value=["build"], scope=_repo(sandbox), provenance=AGENT))
    developer = ScriptedClarifier({"fs.protected_paths": []})
    decision = _clean_guard(store, sandbox, developer, examine_stops=False).check(_task(sandbox, "clean the build"))
    assert decision.verdict is Verdict.STOP and developer.asked == []
    assert decision.report.candidates == []
    blind = _clean_guard(store, sandbox, developer, disabled=frozenset({"attribution"}))
    assert blind.check(_task(sandbox, "clean the build")).verdict is Verdict.STOP and developer.asked == []


def test_a_stop_for_want_of_a_fact_asks_for_it_and_learns_it(store, sandbox):
    store.put(RecordDraft(key="fs.protected_paths", value=["src"], scope=_repo(sandbox), provenance=_developer()))
    developer = ScriptedClarifier({"fs.build_dir": "build"})
    decision = _clean_guard(store, sandbox, developer).check(_task(sandbox, "clean the build"))
    assert decision.verdict is Verdict.EXECUTE and decision.action.args["path"] == "build"
    assert [q.key for q in developer.asked] == ["fs.build_dir"]
    learned = store.get_active("fs.build_dir", _repo(sandbox))
    assert learned is not None and learned.value == "build"
    assert any(r.kind == "learn" and r.key == "fs.build_dir" for r in decision.report.repairs)


def _fresh_but_wrong_protection(store, sandbox) -> str:
    """An authoritative observation an hour old that says main is unprotected; origin protects it."""
    return store.put(RecordDraft(key="repository.protected", value=False, scope=f"{_repo(sandbox)}@main",
                                 provenance=MACHINE, observed_at=AN_HOUR_AGO, verified_at=AN_HOUR_AGO)).id


def test_a_trusted_machine_fact_is_observed_before_a_risky_action(store, sandbox):
    record_id = _fresh_but_wrong_protection(store, sandbox)
    main_before = sandbox.remote_ref("main")
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(_task(sandbox, "push the changes"))
    premise = next(p for p in decision.report.premises if p.record_id == record_id)
    assert premise.findings == [] and premise.route == "verifier" and premise.status is PremiseStatus.DEFECTIVE
    assert decision.verdict is Verdict.EXECUTE and "force" not in decision.action.args
    assert decision.action.args["branch"] != "main"
    assert store.get(record_id).status is RecordStatus.SUPERSEDED
    assert sandbox.remote_ref("main") == main_before


def test_the_papers_reliability_only_policy_trusts_that_fact(store, sandbox):
    record_id = _fresh_but_wrong_protection(store, sandbox)
    guard = Guard(store, planner=RulePlanner(), workspace=sandbox.work, config=GuardConfig(verify_from_risk=None))
    decision = guard.check(_task(sandbox, "push the changes"))
    premise = next(p for p in decision.report.premises if p.record_id == record_id)
    assert premise.route == "reliability" and premise.status is PremiseStatus.VALID
    assert decision.report.proposal.args["force"] is True
    assert store.get(record_id).status is RecordStatus.ACTIVE  # the wrong record survives the check


def test_a_recently_confirmed_fact_is_not_observed_again(store, sandbox):
    store.put(RecordDraft(key="repository.protected", value=True, scope=f"{_repo(sandbox)}@main",
                          provenance=MACHINE, verified_at=datetime.now(UTC)))
    decision = Guard(store, planner=RulePlanner(), workspace=sandbox.work).check(_task(sandbox, "push the changes"))
    premise = next(p for p in decision.report.premises if p.key == "repository.protected")
    assert premise.route == "reliability"


def test_verify_from_risk_is_validated():
    with pytest.raises(ValueError, match="verify_from_risk"):
        GuardConfig(verify_from_risk="severe")


def test_a_teammates_word_on_a_users_own_setting_is_not_the_users(store, sandbox):
    spec = builtin_contract().state_spec("user.preferred_branch_prefix")
    scope = derive_task_scope(sandbox.work, user="maria")

    def findings(actor: str, record_scope: str = "user:maria") -> list[str]:
        record = store.put(RecordDraft(key="user.preferred_branch_prefix", value="team/", scope=record_scope,
                                       provenance=_developer(actor)), replace=True)
        return reliability_findings(record, spec, scope, [], datetime.now(UTC))

    assert any("bob stated maria's own setting" in f for f in findings("bob"))
    assert findings("maria") == []
    assert any("set per user" in f for f in findings("maria", _repo(sandbox)))


def test_a_per_user_setting_kept_at_repository_scope_is_relocated(store, sandbox):
    misplaced = store.put(RecordDraft(key="user.preferred_branch_prefix", value="chris/", scope=_repo(sandbox),
                                      provenance=AGENT)).id
    store.put(RecordDraft(key="repository.protected", value=True, scope=f"{_repo(sandbox)}@main",
                          provenance=MACHINE, verified_at=datetime.now(UTC)))
    developer = ScriptedClarifier({"user.preferred_branch_prefix": "priya-"})
    guard = Guard(store, planner=RulePlanner(), clarifier=developer, workspace=sandbox.work)
    decision = guard.check(_task(sandbox, "push the login fix", user="priya"))

    assert decision.verdict is Verdict.EXECUTE, decision.reason
    assert decision.action.args["branch"].startswith("priya-")
    [relocation] = [r for r in decision.report.repairs if r.kind == "relocate"]
    assert relocation.scope == "user:priya" and relocation.old_value == "chris/"
    assert store.get(misplaced).status is RecordStatus.RETRACTED
    assert store.get_active("user.preferred_branch_prefix", "user:priya").value == "priya-"
    assert store.get(misplaced).value == "chris/"  # kept as history
