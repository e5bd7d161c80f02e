"""Stage 3, repair (write-back to the store), on its own: each established premise becomes at
most one atomic write on a real SQLite store, with lineage, within the scope the evidence
reached."""

from __future__ import annotations

from datetime import UTC, datetime

from statewise.pipeline import PremiseReport, PremiseStatus
from statewise.pipeline.repair import apply_repair, learn
from statewise.records import Authority, Evidence, LinkKind, Provenance, RecordDraft, RecordStatus, SourceKind
from statewise.values import ValueType

REPO = "repo:github.com/acme/app"
MAIN = f"{REPO}@main"
MACHINE = Provenance(source="observation", authority="machine", actor="git")


def _evidence(value: bool, scope: str = MAIN) -> Evidence:
    return Evidence(key="repository.protected", value=value, value_type=ValueType.BOOL, scope=scope,
                    source=SourceKind.OBSERVATION, authority=Authority.MACHINE, actor="git.branch_protection",
                    observed_at=datetime.now(UTC), detail="the origin refuses pushes to main")


def _premise(record, status: PremiseStatus, evidence: Evidence | None = None, **extra) -> PremiseReport:
    return PremiseReport(record_id=record.id, key=record.key, scope=record.scope, value=record.value, status=status,
                         route=extra.pop("route", "verifier"), evidence=evidence, **extra)


def _protected(store, value: bool, scope: str = MAIN):
    return store.put(RecordDraft(key="repository.protected", value=value, scope=scope, provenance=MACHINE))


def test_a_defective_premise_supersedes_the_record_with_lineage(store):
    record = _protected(store, False)
    repair, premise = apply_repair(store, record, _premise(record, PremiseStatus.DEFECTIVE, _evidence(True)))
    assert premise.status is PremiseStatus.DEFECTIVE
    assert repair is not None and repair.kind == "supersede" and repair.old_value is False and repair.new_value is True
    assert store.get(record.id).status is RecordStatus.SUPERSEDED
    current = store.get_active("repository.protected", MAIN)
    assert current is not None and current.id == repair.new_record_id and current.value is True
    [link] = store.lineage(record.id).links
    assert link.kind is LinkKind.SUPERSEDE and link.id == repair.link_id
    assert link.evidence is not None and link.evidence.actor == "git.branch_protection"


def test_an_over_general_record_is_narrowed_where_the_evidence_reaches(store):
    record = _protected(store, False, scope=REPO)  # said of every branch; observed on main only
    repair, _ = apply_repair(store, record, _premise(record, PremiseStatus.DEFECTIVE, _evidence(True)))
    assert repair is not None and repair.kind == "narrow" and repair.scope == MAIN
    assert store.get_active("repository.protected", MAIN).value is True
    assert store.get_active("repository.protected", REPO).value is False  # other branches keep it
    # The no_typed_grounding ablation writes the correction in the record's own scope instead.
    other = _protected(store, False, scope="repo:github.com/acme/other")
    evidence = _evidence(True, scope="repo:github.com/acme/other@main")
    ungrounded, _ = apply_repair(store, other, _premise(other, PremiseStatus.DEFECTIVE, evidence), grounded=False)
    assert ungrounded is not None and ungrounded.kind == "supersede" and ungrounded.scope == other.scope


def test_a_subject_observed_absent_is_retracted(store):
    record = _protected(store, True)
    repair, _ = apply_repair(store, record, _premise(record, PremiseStatus.DEFECTIVE, absent=True,
                                                     detail="no branch main on the origin"))
    assert repair is not None and repair.kind == "retract"
    gone = store.get(record.id)
    assert gone.status is RecordStatus.RETRACTED and "observed absent" in (gone.status_reason or "")
    assert store.get_active("repository.protected", MAIN) is None


def test_a_verified_premise_is_confirmed_and_one_settled_by_reliability_writes_nothing(store):
    record = _protected(store, True)
    before = len(store.history("repository.protected", MAIN))
    repair, _ = apply_repair(store, record, _premise(record, PremiseStatus.VALID, _evidence(True)))
    assert repair is not None and repair.kind == "confirm" and repair.new_value is True
    confirmed = store.get_active("repository.protected", MAIN)
    assert confirmed.time.verified_at is not None and confirmed.value is True
    assert len(store.history("repository.protected", MAIN)) == before  # no new version of the value
    nothing, _ = apply_repair(store, confirmed, _premise(confirmed, PremiseStatus.VALID, route="reliability"))
    assert nothing is None


def test_a_record_that_changed_meanwhile_is_not_overwritten(store):
    record = _protected(store, False)
    store.confirm(record.id, _evidence(False), expected_version=record.version)  # someone else wrote first
    repair, premise = apply_repair(store, record, _premise(record, PremiseStatus.DEFECTIVE, _evidence(True)))
    assert repair is None and premise.status is PremiseStatus.UNRESOLVED
    assert "changed while it was being checked" in (premise.missing or "")
    assert store.get_active("repository.protected", MAIN).value is False


def test_a_fact_the_gate_observed_is_learned_once(store):
    observed = PremiseReport(record_id=None, key="repository.protected", scope=MAIN, value=True,
                             status=PremiseStatus.VALID, route="verifier", evidence=_evidence(True))
    learned = learn(store, observed)
    assert learned is not None and learned.kind == "learn" and learned.record_id is None
    record = store.get(learned.new_record_id)
    assert record.value is True and record.scope == MAIN and record.time.verified_at is not None
    assert learn(store, observed) is None  # already on record
    unresolved = observed.model_copy(update={"status": PremiseStatus.UNRESOLVED})
    assert learn(store, unresolved) is None
