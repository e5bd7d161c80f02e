"""The store contract, run unchanged against every backend (SQLite and PostgreSQL)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from statewise.errors import (
    ActiveRecordExistsError,
    GroundingError,
    ImportFormatError,
    KeyNameError,
    RecordNotFoundError,
    StaleVersionError,
    TransitionError,
    ValueTypeError,
)
from statewise.records import (
    Evidence,
    KeyType,
    LinkKind,
    Provenance,
    RecordDraft,
    RecordStatus,
)
from statewise.scopes import TaskScope
from statewise.store.sqlite import SQLiteStore
from statewise.values import ValueType

DEV = Provenance(source="developer", authority="developer", actor="alice")
REPO = "github.com/acme/app"
MAIN = f"repo:{REPO}@main"
TASK = TaskScope(user="alice", workspace="/home/alice/src/app", repo=REPO, branch="main")


def draft(key: str, value, scope: str, value_type: str, **extra) -> RecordDraft:
    return RecordDraft(key=key, value=value, scope=scope, value_type=value_type, provenance=DEV, **extra)


def evidence(key: str, value, scope: str, value_type: str, actor: str = "git.branch_protection") -> Evidence:
    return Evidence(
        key=key, value=value, value_type=value_type, scope=scope, source="observation",
        authority="machine", actor=actor, observed_at=datetime.now(UTC), detail="observed on the remote",
    )


def snapshot_of(store) -> list[tuple]:
    """Everything about every record that a write could change."""
    return [(r.id, r.key, r.scope, r.value, r.status, r.version, r.time.verified_at) for r in store.records()]


# --- put / get --------------------------------------------------------------------------


def test_put_then_get_returns_the_same_record(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    assert store.get(record.id) == record
    assert store.get_active("repository.protected", MAIN) == record
    assert record.status is RecordStatus.ACTIVE
    assert record.version == 1
    assert record.time.recorded_at.tzinfo is not None


@pytest.mark.parametrize(
    ("value_type", "value"),
    [("bool", True), ("int", 3), ("string", "pytest -x"), ("version", "3.11.7"), ("path", "/usr/bin/python3"),
     ("list", ["a", "b"]), ("enum", "pip")],
)
def test_every_value_type_round_trips(store, value_type, value):
    record = store.put(draft("test.value", value, "global", value_type))
    assert store.get(record.id).value == value
    assert store.get(record.id).value_type is ValueType(value_type)


@pytest.mark.parametrize(("value_type", "value"), [("bool", "true"), ("int", "3"), ("version", 3.11), ("list", "a")])
def test_type_mismatch_is_an_error_and_writes_nothing(store, value_type, value):
    with pytest.raises(ValueTypeError):
        store.put(draft("test.value", value, "global", value_type))
    assert store.count() == 0


def test_get_unknown_id_raises(store):
    with pytest.raises(RecordNotFoundError):
        store.get("rec_nope")


def test_second_active_record_for_same_key_and_scope_is_refused(store):
    first = store.put(draft("project.test_command", "pytest", MAIN, "string"))
    with pytest.raises(ActiveRecordExistsError) as info:
        store.put(draft("project.test_command", "tox", MAIN, "string"))
    assert info.value.record_id == first.id
    assert [r.value for r in store.history("project.test_command", MAIN)] == ["pytest"]


def test_put_with_replace_supersedes_and_links(store):
    first = store.put(draft("project.test_command", "pytest", MAIN, "string"))
    second = store.put(draft("project.test_command", "tox", MAIN, "string"), replace=True, reason="switched to tox")
    old = store.get(first.id)
    assert old.status is RecordStatus.SUPERSEDED and old.superseded_by == second.id
    assert second.supersedes == first.id
    [link] = store.links(second.id)
    assert link.kind is LinkKind.SUPERSEDE and link.reason == "switched to tox"
    assert link.evidence is not None and link.evidence.value == "tox"


def test_key_schema_is_enforced(store):
    class Schema:
        def key_type(self, key):
            return {"repository.protected": KeyType(ValueType.BOOL, ttl_seconds=60),
                    "project.package_manager": KeyType(ValueType.ENUM, choices=("pip", "uv"))}.get(key)

    store.key_schema = Schema()
    record = store.put(RecordDraft(key="repository.protected", value=True, scope=MAIN, provenance=DEV))
    assert record.value_type is ValueType.BOOL and record.time.ttl_seconds == 60
    with pytest.raises(KeyNameError):
        store.put(draft("unknown.key", True, MAIN, "bool"))
    with pytest.raises(ValueTypeError):
        store.put(draft("repository.protected", "yes", "global", "string"))
    with pytest.raises(ValueTypeError):
        store.put(RecordDraft(key="project.package_manager", value="conda", scope=MAIN, provenance=DEV))
    assert store.count() == 1


# --- retrieval --------------------------------------------------------------------------


def test_retrieve_returns_only_applying_records_most_specific_first(store):
    general = store.put(draft("runtime.python_version", "3.8", "global", "version"))
    mine = store.put(draft("runtime.python_version", "3.11", "workspace:/home/alice/src/app", "version"))
    other_repo = store.put(draft("repository.protected", True, "repo:github.com/acme/other@main", "bool"))
    ours = store.put(draft("repository.protected", False, MAIN, "bool"))
    user = store.put(draft("user.allow_force_push", False, "user:alice", "bool"))
    bob = store.put(draft("user.allow_force_push", True, "user:bob", "bool"))

    result = store.retrieve(TASK)
    by_key = {r.key: r for r in result.records}
    assert by_key["runtime.python_version"].id == mine.id
    assert by_key["repository.protected"].id == ours.id
    assert by_key["user.allow_force_push"].id == user.id
    assert [r.id for r in result.shadowed] == [general.id]
    returned = {r.id for r in result.records + result.shadowed + result.stale}
    assert other_repo.id not in returned and bob.id not in returned


def test_retrieve_flags_near_misses_instead_of_mixing_them_in(store):
    store.put(draft("repository.protected", True, f"repo:{REPO}@release", "bool"))
    store.put(draft("build.output_dir", "dist", "workspace:/home/alice/src/app/sub", "path"))
    elsewhere = store.put(draft("project.test_command", "npm test", "repo:github.com/acme/web", "string"))
    result = store.retrieve(TASK, keys=["repository.protected", "build.output_dir", "project.test_command"])
    assert result.records == []
    near = {r.scope for r in result.near_misses}
    assert near == {f"repo:{REPO}@release", "workspace:/home/alice/src/app/sub", elsewhere.scope}
    assert result.held_back["near_misses"] == 3


def test_retrieve_holds_back_stale_records(store):
    old = datetime.now(UTC) - timedelta(hours=2)
    stale = store.put(draft("runtime.node_version", "18.0.0", MAIN, "version", ttl_seconds=60, observed_at=old))
    fresh = store.put(draft("runtime.python_version", "3.11", MAIN, "version", ttl_seconds=3600))
    result = store.retrieve(TASK)
    assert [r.id for r in result.records] == [fresh.id]
    assert [r.id for r in result.stale] == [stale.id]


def test_retrieve_filters_by_key_base_key_and_text(store):
    store.put(draft("python.package_version[requests]", "2.31.0", MAIN, "version"))
    store.put(draft("python.package_version[numpy]", "1.26.0", MAIN, "version"))
    store.put(draft("project.test_command", "pytest -x", MAIN, "string"))
    assert {r.key for r in store.retrieve(TASK, keys=["python.package_version"]).records} == {
        "python.package_version[requests]", "python.package_version[numpy]"}
    assert [r.key for r in store.retrieve(TASK, keys=["python.package_version[numpy]"]).records] == [
        "python.package_version[numpy]"]
    assert [r.key for r in store.retrieve(TASK, text="PYTEST").records] == ["project.test_command"]


def test_retrieve_with_unknown_task_parts_applies_only_global(store):
    store.put(draft("runtime.python_version", "3.8", "global", "version"))
    store.put(draft("repository.protected", True, MAIN, "bool"))
    assert [r.key for r in store.retrieve(TaskScope()).records] == ["runtime.python_version"]


# --- supersession and narrowing ---------------------------------------------------------


def test_supersede_replaces_in_scope_and_keeps_old_value_and_evidence(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    result = store.supersede(record.id, evidence("repository.protected", True, MAIN, "bool"),
                             expected_version=record.version, reason="remote rejects pushes")
    assert result.link.kind is LinkKind.SUPERSEDE
    assert store.get(record.id).value is False
    assert store.get(record.id).status is RecordStatus.SUPERSEDED
    assert store.get(record.id).superseded_by == result.new.id
    assert result.new.supersedes == record.id and result.new.value is True
    assert result.new.provenance.authority.value == "machine"
    assert result.new.time.verified_at is not None
    assert store.get_active("repository.protected", MAIN).id == result.new.id
    [link] = store.links(result.new.id)
    assert link.evidence.actor == "git.branch_protection" and link.reason == "remote rejects pushes"


def test_supersede_with_stale_version_writes_nothing(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    store.supersede(record.id, evidence("repository.protected", True, MAIN, "bool"), expected_version=1)
    before = snapshot_of(store)
    with pytest.raises((StaleVersionError, TransitionError)):
        store.supersede(record.id, evidence("repository.protected", True, MAIN, "bool"), expected_version=1)
    assert snapshot_of(store) == before


def test_supersede_with_wrong_version_of_active_record_is_stale(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    with pytest.raises(StaleVersionError):
        store.supersede(record.id, evidence("repository.protected", True, MAIN, "bool"), expected_version=7)
    assert store.get(record.id).status is RecordStatus.ACTIVE


@pytest.mark.parametrize(
    ("ev_key", "ev_value", "ev_scope", "ev_type"),
    [
        ("repository.default_branch", "main", MAIN, "string"),  # another key
        ("repository.protected", "true", MAIN, "string"),  # another type
        ("repository.protected", True, "repo:github.com/acme/other@main", "bool"),  # unrelated scope
        ("repository.protected", False, MAIN, "bool"),  # confirms instead of correcting
    ],
)
def test_evidence_must_be_grounded_in_the_record(store, ev_key, ev_value, ev_scope, ev_type):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    before = snapshot_of(store)
    with pytest.raises(GroundingError):
        store.supersede(record.id, evidence(ev_key, ev_value, ev_scope, ev_type), expected_version=1)
    assert snapshot_of(store) == before


def test_narrowing_corrects_only_where_the_evidence_reaches(store):
    general = store.put(draft("project.test_command", "pytest", "global", "string"))
    unrelated = store.put(draft("project.test_command", "make test", "repo:github.com/acme/lib", "string"))
    others_before = [r for r in snapshot_of(store) if r[0] != general.id]
    result = store.supersede(general.id, evidence("project.test_command", "npm test", f"repo:{REPO}", "string",
                                                  actor="alice"), expected_version=1)
    assert result.link.kind is LinkKind.NARROW
    assert result.new.scope == f"repo:{REPO}" and result.new.value == "npm test"
    assert store.get(general.id).status is RecordStatus.ACTIVE  # still in force elsewhere
    assert store.get(general.id).version == general.version
    assert store.retrieve(TASK, keys=["project.test_command"]).records[0].value == "npm test"
    other_task = TaskScope(repo="github.com/acme/tools")
    assert store.retrieve(other_task, keys=["project.test_command"]).records[0].value == "pytest"
    assert store.get(unrelated.id) == unrelated
    others_after = [r for r in snapshot_of(store) if r[0] not in (general.id, result.new.id)]
    assert others_after == others_before


def test_narrowing_replaces_an_existing_narrow_record(store):
    general = store.put(draft("runtime.python_version", "3.8", "global", "version"))
    narrow = store.put(draft("runtime.python_version", "3.9", "workspace:/w/a", "version"))
    result = store.supersede(general.id, evidence("runtime.python_version", "3.12", "workspace:/w/a", "version",
                                                  actor="python.version"), expected_version=1)
    assert result.replaced is not None and result.replaced.id == narrow.id
    assert store.get(narrow.id).status is RecordStatus.SUPERSEDED
    assert store.get_active("runtime.python_version", "workspace:/w/a").value == "3.12"
    assert store.get(general.id).status is RecordStatus.ACTIVE
    assert [r.value for r in store.history("runtime.python_version", "workspace:/w/a")] == ["3.9", "3.12"]


def test_evidence_with_broader_scope_supersedes_in_the_records_own_scope(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    result = store.supersede(record.id, evidence("repository.protected", True, "global", "bool"), expected_version=1)
    assert result.new.scope == MAIN and result.link.kind is LinkKind.SUPERSEDE


def test_confirm_refreshes_verified_at_without_a_semantic_write(store):
    record = store.put(draft("repository.protected", True, MAIN, "bool"))
    confirmed = store.confirm(record.id, evidence("repository.protected", True, MAIN, "bool"), expected_version=1)
    assert confirmed.value is True and confirmed.id == record.id
    assert confirmed.time.verified_at is not None and confirmed.version == 2
    assert store.get(record.id) == confirmed
    assert [r.id for r in store.history("repository.protected", MAIN)] == [record.id]
    assert [lk.kind for lk in store.links(record.id)] == [LinkKind.VERIFY]
    with pytest.raises(GroundingError):
        store.confirm(record.id, evidence("repository.protected", False, MAIN, "bool"), expected_version=2)


# --- retract, expire, revert ------------------------------------------------------------


def test_retract_is_distinct_and_final(store):
    record = store.put(draft("user.allow_force_push", True, "user:alice", "bool"))
    retracted = store.retract(record.id, reason="forget this", actor="alice")
    assert retracted.status is RecordStatus.RETRACTED and retracted.status_reason == "forget this"
    assert store.get_active("user.allow_force_push", "user:alice") is None
    with pytest.raises(TransitionError):
        store.retract(record.id, reason="again", actor="alice")
    with pytest.raises(TransitionError):
        store.supersede(record.id, evidence("user.allow_force_push", False, "user:alice", "bool"),
                        expected_version=retracted.version)


def test_expire_lapsed_marks_only_lapsed_records(store):
    now = datetime.now(UTC)
    lapsed = store.put(draft("runtime.node_version", "18.0.0", MAIN, "version", ttl_seconds=60,
                             observed_at=now - timedelta(minutes=5)))
    fresh = store.put(draft("runtime.python_version", "3.11", MAIN, "version", ttl_seconds=3600))
    forever = store.put(draft("project.test_command", "pytest", MAIN, "string",
                              observed_at=now - timedelta(days=900)))
    expired = store.expire_lapsed(now)
    assert [r.id for r in expired] == [lapsed.id]
    assert store.get(lapsed.id).status is RecordStatus.EXPIRED
    assert store.get(fresh.id).status is RecordStatus.ACTIVE
    assert store.get(forever.id).status is RecordStatus.ACTIVE


def test_revert_restores_the_previous_value_with_lineage(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    repair = store.supersede(record.id, evidence("repository.protected", True, MAIN, "bool"), expected_version=1)
    restored = store.revert(repair.new.id, reason="protection check was misconfigured", actor="alice")
    assert restored is not None and restored.value is False and restored.supersedes == repair.new.id
    assert store.get(repair.new.id).status is RecordStatus.SUPERSEDED
    assert store.get_active("repository.protected", MAIN).id == restored.id
    assert [r.value for r in store.history("repository.protected", MAIN)] == [False, True, False]
    kinds = [lk.kind for lk in store.lineage(record.id).links]
    assert kinds == [LinkKind.SUPERSEDE, LinkKind.REVERT]
    with pytest.raises(TransitionError):
        store.revert(repair.new.id, reason="twice", actor="alice")


def test_revert_of_a_narrowing_lets_the_general_record_apply_again(store):
    general = store.put(draft("project.test_command", "pytest", "global", "string"))
    repair = store.supersede(general.id, evidence("project.test_command", "npm test", f"repo:{REPO}", "string"),
                             expected_version=1)
    assert store.revert(repair.new.id, reason="wrong repository", actor="alice") is None
    assert store.get(repair.new.id).status is RecordStatus.RETRACTED
    assert store.retrieve(TASK, keys=["project.test_command"]).records[0].id == general.id


def test_revert_of_a_record_that_repaired_nothing_is_refused(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    with pytest.raises(TransitionError):
        store.revert(record.id, reason="x", actor="alice")


# --- history and lineage ----------------------------------------------------------------


def test_history_is_complete_and_ordered(store):
    record = store.put(draft("project.test_command", "pytest", MAIN, "string"))
    values = ["pytest", "tox", "nox", "make test"]
    current = record
    for value in values[1:]:
        current = store.supersede(current.id, evidence("project.test_command", value, MAIN, "string", actor="alice"),
                                  expected_version=current.version).new
    history = store.history("project.test_command", MAIN)
    assert [r.value for r in history] == values
    assert [r.status for r in history] == [RecordStatus.SUPERSEDED] * 3 + [RecordStatus.ACTIVE]
    for older, newer in zip(history, history[1:], strict=False):
        assert older.superseded_by == newer.id and newer.supersedes == older.id
    lineage = store.lineage(history[1].id)
    assert [r.id for r in lineage.records] == [r.id for r in history]
    assert [lk.evidence.value for lk in lineage.links] == values[1:]


# --- export, import, snapshot -----------------------------------------------------------


def _populate(store):
    record = store.put(draft("repository.protected", False, MAIN, "bool"))
    store.supersede(record.id, evidence("repository.protected", True, MAIN, "bool"), expected_version=1)
    store.put(draft("runtime.python_version", "3.11", "global", "version", ttl_seconds=3600))


def test_export_import_round_trip_into_sqlite(store, tmp_path):
    _populate(store)
    buffer = io.StringIO()
    lines = store.export_jsonl(buffer)
    assert lines == 4  # three records and one link
    target = SQLiteStore(tmp_path / "copy.db")
    try:
        assert target.import_jsonl(buffer.getvalue().splitlines(), source="export.jsonl") == 4
        assert list(target.records()) == list(store.records())
        assert list(target.all_links()) == list(store.all_links())
    finally:
        target.close()


def test_malformed_import_line_is_named_and_nothing_is_written(store):
    good = json.dumps({"type": "record", **_a_record_json()})
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl([good, "{not json"], source="bad.jsonl")
    assert info.value.line == 2 and "bad.jsonl:2" in str(info.value)
    assert store.count() == 0
    bad_type = {**_a_record_json(), "value": "yes"}
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl([json.dumps({"type": "record", **bad_type})], source="bad.jsonl")
    assert info.value.line == 1
    with pytest.raises(ImportFormatError):
        store.import_jsonl([json.dumps({"type": "record", **_a_record_json(), "extra": 1})], source="x")
    assert store.count() == 0


def test_import_that_would_break_one_active_per_scope_writes_nothing(store):
    first = {**_a_record_json(), "id": "rec_a"}
    second = {**_a_record_json(), "id": "rec_b"}
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl([json.dumps({"type": "record", **r}) for r in (first, second)], source="dup.jsonl")
    assert info.value.line == 2
    assert store.count() == 0


def test_snapshot_and_restore(store, tmp_path):
    _populate(store)
    before = list(store.records())
    path = tmp_path / "snap.jsonl"
    store.snapshot(path)
    store.put(draft("project.test_command", "tox", MAIN, "string"))
    store.retract(before[-1].id, reason="x", actor="alice")
    store.restore(path)
    assert list(store.records()) == before


def _a_record_json() -> dict:
    now = datetime.now(UTC).isoformat()
    return {
        "id": "rec_import1", "key": "repository.protected", "value": True, "value_type": "bool",
        "scope": MAIN, "status": "active",
        "time": {"observed_at": now, "recorded_at": now, "verified_at": None, "ttl_seconds": None},
        "provenance": {"source": "import", "authority": "developer", "actor": "alice", "reference": None},
        "supersedes": None, "superseded_by": None, "version": 1, "status_reason": None,
        "status_changed_at": None,
    }
