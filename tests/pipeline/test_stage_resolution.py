"""Stage 2, resolution and verification, on its own: reliability checks first, then the
read-only verifier, on records read from a real SQLite store and a real git repository whose
origin really protects main."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from statewise.contract import builtin_contract
from statewise.pipeline import PremiseStatus
from statewise.pipeline.calls import CostMeter
from statewise.pipeline.resolution import Resolver, established_scope, reliability_findings, resolved_value
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import GitSandbox
from statewise.workspace import derive_task_scope

MACHINE = Provenance(source="observation", authority="machine", actor="git")
AGENT = Provenance(source="agent_inference", authority="agent", actor="an agent")


def _resolver(sandbox: GitSandbox, **extra) -> Resolver:
    return Resolver(builtin_contract(), derive_task_scope(sandbox.work, user="dev"), sandbox.work, CostMeter(),
                    **extra)


def _protected(store, sandbox, value: bool, *, days: float = 0, provenance: Provenance = MACHINE):
    return store.put(RecordDraft(key="repository.protected", value=value, scope=f"repo:{sandbox.repo_identity}@main",
                                 provenance=provenance,
                                 observed_at=datetime.now(UTC) - timedelta(days=days)))


def test_a_stale_wrong_record_is_observed_and_found_defective(store, sandbox):
    record = _protected(store, sandbox, False, days=3)
    resolver = _resolver(sandbox)
    premise = resolver.resolve(record)
    assert premise.status is PremiseStatus.DEFECTIVE and premise.route == "verifier"
    assert any(finding.startswith("freshness:") for finding in premise.findings)
    # Typed grounding: the evidence is bound to the same key, type and scope.
    evidence = premise.evidence
    assert evidence is not None and evidence.value is True and evidence.key == record.key
    assert evidence.value_type == record.value_type and evidence.scope == record.scope
    assert evidence.actor == "git.branch_protection"
    assert resolved_value(premise) is True and resolver.meter.verifier_calls == 1


def test_a_fresh_record_from_its_authority_is_settled_without_a_verifier(store, sandbox):
    record = _protected(store, sandbox, True)
    resolver = _resolver(sandbox)
    premise = resolver.resolve(record)
    assert premise.status is PremiseStatus.VALID and premise.route == "reliability" and premise.findings == []
    assert resolver.meter.verifier_calls == 0
    # Before a riskier action the guard asks for an observation anyway.
    observed = resolver.resolve(record, observe=True)
    assert observed.status is PremiseStatus.VALID and observed.route == "verifier"
    assert resolver.meter.verifier_calls == 1


def test_a_fresh_record_from_the_wrong_authority_is_verified(store, sandbox):
    record = _protected(store, sandbox, True, provenance=AGENT)
    findings = reliability_findings(record, builtin_contract().state["repository.protected"],
                                    derive_task_scope(sandbox.work, user="dev"), [record], datetime.now(UTC))
    assert any(f.startswith("authority:") for f in findings)
    premise = _resolver(sandbox).resolve(record)
    assert premise.route == "verifier" and premise.status is PremiseStatus.VALID  # true, as the origin says


def test_a_newer_conflicting_record_is_a_finding(store, sandbox):
    older = _protected(store, sandbox, True, days=0.5)
    newer = store.put(RecordDraft(key="repository.protected", value=False, scope=f"repo:{sandbox.repo_identity}",
                                  provenance=MACHINE))
    findings = reliability_findings(older, builtin_contract().state["repository.protected"],
                                    derive_task_scope(sandbox.work, user="dev"), [older, newer], datetime.now(UTC))
    assert any(f.startswith("conflict:") and newer.id in f for f in findings)


def test_a_missing_fact_is_observed_and_an_undeclared_key_is_unresolved(sandbox):
    resolver = _resolver(sandbox)
    branch = resolver.resolve_missing("git.current_branch")
    assert branch.status is PremiseStatus.VALID and branch.evidence is not None and branch.evidence.value == "main"
    assert branch.findings == ["no record in the store"]
    unknown = resolver.resolve_missing("no.such_key")
    assert unknown.status is PremiseStatus.UNRESOLVED and "does not declare" in (unknown.missing or "")


def test_without_a_workspace_the_verifier_cannot_see_and_says_so(store, sandbox):
    record = _protected(store, sandbox, False, days=3)
    blind = Resolver(builtin_contract(), derive_task_scope(sandbox.work, user="dev"), None, CostMeter())
    premise = blind.resolve(record)
    assert premise.status is PremiseStatus.UNRESOLVED and premise.missing == "no workspace to observe"
    assert blind.meter.verifier_calls == 0


def test_evidence_establishes_the_scope_at_the_keys_level(sandbox):
    task = derive_task_scope(sandbox.work, user="dev")
    contract = builtin_contract()
    assert established_scope(task, contract.state["repository.protected"], None) == \
        f"repo:{sandbox.repo_identity}@main"
    assert established_scope(task, contract.state["project.test_command"], None) == f"repo:{sandbox.repo_identity}"
