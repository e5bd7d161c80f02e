"""Rows as plain data (statewise.store.rows): the same records as the models, on both backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.errors import RecordNotFoundError
from statewise.records import Evidence, Provenance, Record, RecordDraft, Retrieval
from statewise.scopes import TaskScope
from statewise.store.rows import RecordRow, RetrievalRows

DEV = Provenance(source="developer", authority="developer", actor="alice", reference="PR 12")
AGENT = Provenance(source="agent_inference", authority="agent", actor="claude")
REPO = "github.com/acme/app"
MAIN = f"repo:{REPO}@main"
TASK = TaskScope(user="alice", workspace="/home/alice/src/app", repo=REPO, branch="main")
LONG_AGO = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def stored_variety(store) -> list[Record]:
    """Records of every value type and shape, as the writes returned them (validated models)."""
    made = [
        store.put(RecordDraft(key="repository.protected", value=False, scope=MAIN, value_type="bool", provenance=DEV)),
        store.put(RecordDraft(key="project.test_command", value="pytest -q", scope="global", value_type="string",
                              provenance=AGENT, observed_at=LONG_AGO, verified_at=LONG_AGO + timedelta(hours=1),
                              ttl_seconds=3600)),
        store.put(RecordDraft(key="python.package_version[requests]", value="2.31.0", scope="user:alice",
                              value_type="string", provenance=DEV)),
        store.put(RecordDraft(key="project.retries", value=3, scope=f"workspace:{TASK.workspace}", value_type="int",
                              provenance=DEV)),
        store.put(RecordDraft(key="project.protected_paths", value=["a/*", "b é"], scope="global", value_type="list",
                              provenance=DEV)),
        store.put(RecordDraft(key="git.default_branch", value="main", scope=f"repo:{REPO}@dev", value_type="string",
                              provenance=DEV)),
    ]
    old = made[0]
    repair = store.supersede(old.id, Evidence(
        key=old.key, value=True, value_type="bool", scope=MAIN, source="observation", authority="machine",
        actor="git.branch_protection", observed_at=datetime.now(UTC), detail="observed"), expected_version=1,
        reason="corrected")
    retracted = store.retract(made[3].id, reason="forget it", actor="alice")
    return [repair.old, repair.new, retracted, *made[1:3], *made[4:]]


def test_a_row_becomes_exactly_the_record_the_write_returned(store):
    for record in stored_variety(store):
        row = store.get_row(record.id)
        assert isinstance(row, RecordRow)
        rebuilt = row.to_record()
        assert rebuilt == record
        assert rebuilt.model_dump() == record.model_dump()
        # The same Python types, field by field (an enum stays an enum, a time stays aware).
        for name, value in record.model_dump().items():
            assert type(rebuilt.model_dump()[name]) is type(value), name
        assert rebuilt == store.get(record.id)
        assert RecordRow.from_record(record) == row


def test_a_row_holds_plain_values(store):
    record = stored_variety(store)[3]
    row = store.get_row(record.id)
    assert (row.key, row.value, row.scope, row.status, row.value_type) == (
        "project.test_command", "pytest -q", "global", "active", "string")
    assert (row.source, row.authority, row.actor, row.reference) == ("agent_inference", "agent", "claude", None)
    assert (row.observed_at, row.verified_at, row.ttl_seconds) == (LONG_AGO, LONG_AGO + timedelta(hours=1), 3600)
    assert row.confirmed_at == record.time.confirmed_at
    assert row.is_stale(datetime.now(UTC)) and record.is_stale()
    with pytest.raises(AttributeError):  # immutable: a named tuple's fields cannot be set
        row.value = "other"  # type: ignore[misc]
    assert row.value == "pytest -q" and len(row) == len(RecordRow._fields) == 19


def test_get_row_of_an_unknown_id_raises_like_get(store):
    with pytest.raises(RecordNotFoundError):
        store.get_row("rec_missing")


@pytest.mark.parametrize("options", [{}, {"keys": ["python.package_version"]}, {"text": "PYTEST"},
                                     {"keys": ["git.default_branch"]}, {"near_miss_limit": 0}])
def test_retrieve_rows_are_the_retrieval_row_for_row(store, options):
    stored_variety(store)
    store.put(RecordDraft(key="project.test_command", value="tox", scope=MAIN, value_type="string", provenance=DEV))
    now = datetime.now(UTC)
    rows = store.retrieve_rows(TASK, now=now, **options)
    result = store.retrieve(TASK, now=now, **options)
    assert isinstance(rows, RetrievalRows) and isinstance(result, Retrieval)
    assert rows.to_retrieval() == result
    assert rows == RetrievalRows.from_retrieval(result)
    assert rows.held_back == result.held_back
    if not options:  # the variety has something in every part
        assert rows.records and rows.stale == () and rows.shadowed and rows.near_misses
        assert [r.key for r in rows.records] == sorted(r.key for r in rows.records)


def _line(record: Record, age: str, verified: str, note: str = "") -> str:
    """One line of `record list`, written out field by field (independent of render.py)."""
    note = f"  ({note})" if note else ""
    return (f"  {record.key} = {record.value}  [{record.scope}]  active  "
            f"{record.provenance.source.value}:{record.provenance.actor}  observed {age}, verified {verified}"
            f"{note}  {record.id}")


def test_record_list_prints_the_rows_as_before(tmp_path: Path):
    from statewise.store.sqlite import SQLiteStore

    store_path = tmp_path / "store.db"
    env = {key: value for key, value in os.environ.items() if not key.startswith("STATEWISE_")}
    env.update(STATEWISE_STORE=str(store_path), COLUMNS="200")
    with SQLiteStore(store_path) as store:
        general = store.put(RecordDraft(key="project.test_command", value="pytest -q", scope="global",
                                        value_type="string", provenance=DEV, observed_at=LONG_AGO))
        branch = store.put(RecordDraft(key="project.test_command", value="tox", scope=MAIN, value_type="string",
                                       provenance=AGENT, observed_at=LONG_AGO, verified_at=LONG_AGO))
        other = store.put(RecordDraft(key="git.default_branch", value="dev", scope=f"repo:{REPO}@dev",
                                      value_type="string", provenance=DEV, observed_at=LONG_AGO))
    task = str(TASK)
    listed = subprocess.run([sys.executable, "-m", "statewise", "record", "list", "--task", task],
                            env=env, capture_output=True, text=True, check=True)
    age = f"{(datetime.now(UTC) - LONG_AGO).days}d ago"
    assert listed.stdout == "\n".join([
        f"Records that apply to {task}",
        _line(branch, age, age),
        "",
        "Held back",
        _line(general, age, "never", "shadowed by a more specific scope"),
        _line(other, age, "never", "near miss: does not apply here"),
        "1 applying; held back: 0 stale, 1 shadowed, 1 near_misses",
        "",
    ])
    # The JSON is the model's serialisation, as it was.
    as_json = subprocess.run([sys.executable, "-m", "statewise", "record", "list", "--task", task, "--json"],
                             env=env, capture_output=True, text=True, check=True)
    with SQLiteStore(store_path) as store:
        assert json.loads(as_json.stdout) == store.retrieve(TASK).model_dump(mode="json")
