"""`store check` (the fsck) on both backends: clean stores pass, tampered ones are caught.

Each tampering is raw SQL on the real database, as a person or a broken tool editing the
file or the schema behind StateWise's back would do it.
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from datetime import UTC, datetime

import psycopg
import pytest
from click.testing import CliRunner

from statewise.cli import STORE_CHECK_VIOLATIONS, main
from statewise.errors import StoreCorruptError
from statewise.records import Evidence, Provenance, RecordDraft
from statewise.store import open_store
from statewise.store.check import check_store
from statewise.store.postgres import split_schema

DEV = Provenance(source="developer", authority="developer", actor="alice")
KEY = "project.test_command"
MAIN = "repo:github.com/acme/app@main"


def _draft(value: str, scope: str = "global", key: str = KEY) -> RecordDraft:
    return RecordDraft(key=key, value=value, scope=scope, value_type="string", provenance=DEV)


def _evidence(value: str, scope: str) -> Evidence:
    return Evidence(key=KEY, value=value, value_type="string", scope=scope, source="observation",
                    authority="machine", actor="project.files", observed_at=datetime.now(UTC), detail="read")


def _populate(store) -> dict[str, str]:
    """Every kind of write the store does, so every invariant has something to hold on."""
    first = store.put(_draft("pytest"))
    replaced = store.put(_draft("pytest -x"), replace=True)
    confirmed = store.confirm(replaced.id, _evidence("pytest -x", "global"), expected_version=replaced.version)
    narrow = store.supersede(confirmed.id, _evidence("pytest tests/a", MAIN), expected_version=confirmed.version)
    again = store.supersede(confirmed.id, _evidence("pytest tests/b", MAIN), expected_version=confirmed.version)
    store.revert(again.new.id, reason="evidence withdrawn", actor="alice")
    gone = store.put(_draft("make test", "repo:local/tmp/my%20repo", key="project.build_command"))
    store.retract(gone.id, reason="forget it", actor="alice")
    return {"first": first.id, "replaced": replaced.id, "narrow": narrow.new.id}


def _tamper(backend: str, location: str, *statements: str) -> None:
    """Run raw SQL on the store's database, outside StateWise."""
    if backend == "sqlite":
        conn = sqlite3.connect(location, isolation_level=None)
        try:
            for statement in statements:
                conn.execute(statement)
        finally:
            conn.close()
        return
    conninfo, schema = split_schema(location)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        for statement in statements:
            conn.execute(statement)


def _codes(location: str) -> dict[str, int]:
    with open_store(location, check_integrity=False) as store:
        return check_store(store).by_code()


def _cli(location: str, *args: str):
    return CliRunner().invoke(main, ["--store", location, "store", "check", *args], catch_exceptions=False)


COPY_COLUMNS = (
    "key, scope, value_type, value_json, status, observed_at, recorded_at, verified_at, ttl_seconds, source, "
    "authority, actor, reference, supersedes, superseded_by, version, status_reason, status_changed_at"
)


def test_a_store_after_every_kind_of_write_is_clean(store, store_location):
    _populate(store)
    report = check_store(store)
    assert report.ok, report.violations
    assert (report.records, report.links, report.active) == (6, 7, 2)
    result = _cli(store_location, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True and data["violations"] == [] and data["records"] == 6


def test_two_active_records_for_one_key_and_scope_are_refused_on_open_and_reported(backend, store, store_location):
    ids = _populate(store)
    store.close()
    _tamper(backend, store_location,
            "DROP INDEX sw_records_one_active",
            f"INSERT INTO sw_records (id, {COPY_COLUMNS}) SELECT 'rec_forged', {COPY_COLUMNS} FROM sw_records "
            f"WHERE key = '{KEY}' AND scope = 'global' AND status = 'active'")

    with pytest.raises(StoreCorruptError) as refused:
        open_store(store_location)
    message = str(refused.value)
    assert f"{KEY} in global" in message and "rec_forged" in message and "store check" in message

    with open_store(store_location, check_integrity=False) as opened:
        report = check_store(opened)
    duplicate = [v for v in report.violations if v.code == "duplicate_active"]
    assert len(duplicate) == 1
    assert (duplicate[0].key, duplicate[0].scope) == (KEY, "global")
    assert "rec_forged" in duplicate[0].record_ids
    assert "missing_unique_index" in report.by_code()
    assert ids["first"] not in duplicate[0].record_ids  # the superseded original is not counted

    result = _cli(store_location)
    assert result.exit_code == STORE_CHECK_VIOLATIONS
    assert "duplicate_active" in result.output and "missing_unique_index" in result.output
    as_json = _cli(store_location, "--json")
    assert as_json.exit_code == STORE_CHECK_VIOLATIONS
    data = json.loads(as_json.output)
    assert data["ok"] is False
    assert {v["code"] for v in data["violations"]} >= {"duplicate_active", "missing_unique_index"}

    # Undo the forgery: the store opens again (and the fixture can drop the schema).
    _tamper(backend, store_location, "DELETE FROM sw_records WHERE id = 'rec_forged'")
    with pytest.warns(UserWarning, match="recreated"):
        open_store(store_location).close()
    assert _codes(store_location) == {}


def test_a_dropped_index_without_duplicates_is_reported_then_restored_on_open(backend, store, store_location):
    _populate(store)
    store.close()
    _tamper(backend, store_location, "DROP INDEX sw_records_one_active")
    assert _codes(store_location) == {"missing_unique_index": 1}
    with pytest.warns(UserWarning, match="sw_records_one_active"):
        reopened = open_store(store_location)
    reopened.close()
    assert _codes(store_location) == {}


def test_a_unique_index_replaced_by_a_plain_one_is_caught(backend, store, store_location):
    _populate(store)
    store.close()
    _tamper(backend, store_location, "DROP INDEX sw_records_one_active",
            "CREATE INDEX sw_records_one_active ON sw_records (key, scope)")
    assert _codes(store_location) == {"missing_unique_index": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        open_store(store_location).close()  # puts the real one back
    assert _codes(store_location) == {}


@pytest.mark.parametrize(
    ("tampering", "expected"),
    [
        # The first record forgets who replaced it: the pointer pair and its link disagree.
        ("UPDATE sw_records SET superseded_by = NULL WHERE id = '{first}'",
         {"status_mismatch", "pointer_mismatch", "link_mismatch"}),
        ("DELETE FROM sw_links WHERE kind = 'supersede' AND from_record = '{first}'", {"missing_link"}),
        ("UPDATE sw_links SET evidence_json = NULL WHERE kind = 'narrow'", {"missing_evidence"}),
        ("UPDATE sw_records SET version = 1 WHERE id = '{first}'", {"version_mismatch"}),
        ("UPDATE sw_records SET version = version + 3 WHERE id = '{replaced}'", {"version_mismatch"}),
        ("UPDATE sw_records SET value_json = 'true' WHERE id = '{first}'", {"bad_value"}),
        ("UPDATE sw_records SET scope = 'repo:local/tmp/my%2frepo' WHERE key = 'project.build_command'",
         {"bad_scope"}),
        ("DELETE FROM sw_records WHERE id = '{replaced}'", {"dangling_link", "dangling_pointer"}),
        ("UPDATE sw_records SET seq = -5 WHERE id = '{replaced}'", {"order"}),
        ("UPDATE sw_records SET status = 'expired', status_changed_at = recorded_at WHERE id = '{narrow}'",
         {"missing_link", "status_mismatch"}),
    ],
    ids=["pointer", "link-deleted", "evidence-deleted", "version-rewound", "version-skipped", "value-retyped",
         "scope-not-canonical", "record-deleted", "order", "status-without-link"],
)
def test_each_tampering_is_found(backend, store, store_location, tampering, expected):
    ids = _populate(store)
    store.close()
    assert _codes(store_location) == {}
    _tamper(backend, store_location, tampering.format(**ids))
    found = _codes(store_location)
    assert expected <= set(found), found
    result = _cli(store_location, "--json")
    assert result.exit_code == STORE_CHECK_VIOLATIONS
    reported = json.loads(result.output)["violations"]
    assert all(v["message"] for v in reported)
    assert expected <= {v["code"] for v in reported}


def test_a_store_that_cannot_be_opened_is_exit_one_not_clean(tmp_path):
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"not a database at all, just text" * 4)
    result = CliRunner().invoke(main, ["--store", str(foreign), "store", "check"])
    assert result.exit_code == 1
    assert "not an SQLite database" in result.output
