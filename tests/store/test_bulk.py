"""Streaming bulk import (statewise.store.bulk and Store.import_jsonl), on both backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_type_hints

import pytest

from statewise.errors import ImportFormatError
from statewise.records import KeyType, Link, Provenance, Record, RecordTime
from statewise.store.bulk import LinkLine, ProvenanceLine, RecordLine, TimeLine
from statewise.store.sqlite import SQLiteStore
from statewise.values import ValueType

MAIN = "repo:github.com/acme/app@main"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record_line(n: int, **change) -> dict:
    at = (T0 + timedelta(seconds=n)).isoformat()
    line = {
        "type": "record", "id": f"rec_{n:08d}", "key": f"project.setting_{n % 50}", "value": f"v{n}",
        "value_type": "string", "scope": f"repo:github.com/acme/app{n // 50}@main", "status": "active",
        "time": {"observed_at": at, "recorded_at": at, "verified_at": None, "ttl_seconds": None},
        "provenance": {"source": "import", "authority": "developer", "actor": "alice", "reference": None},
        "supersedes": None, "superseded_by": None, "version": 1, "status_reason": None,
        "status_changed_at": None,
    }
    line.update(change)
    return line


def lines_of(items) -> list[str]:
    return [json.dumps(item) for item in items]


def test_line_models_hold_the_same_fields_as_the_store_models():
    # The dict validators stand for Record, RecordTime and Provenance; a field added to one
    # of those must be added here too, or imports would reject or drop it.
    assert set(get_type_hints(RecordLine, include_extras=True)) - {"type"} == set(Record.model_fields)
    assert set(get_type_hints(TimeLine)) == set(RecordTime.model_fields)
    assert set(get_type_hints(ProvenanceLine)) == set(Provenance.model_fields)
    assert set(LinkLine.model_fields) - {"type"} == set(Link.model_fields)


def test_a_streamed_import_round_trips_records_and_lineage(store, tmp_path):
    old = record_line(1, status="superseded", superseded_by="rec_00000002", version=2,
                      status_reason="corrected", status_changed_at=T0.isoformat())
    new = record_line(2, key=old["key"], scope=old["scope"], supersedes="rec_00000001")
    link = {"type": "link", "id": "lnk_1", "kind": "supersede", "from_record": "rec_00000001",
            "to_record": "rec_00000002", "scope": old["scope"], "evidence": None, "reason": "corrected",
            "actor": "alice", "created_at": T0.isoformat()}
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of([old, new, link])) + "\n\n")
    seen = []
    with open(path, encoding="utf-8") as handle:  # a file object, read lazily
        assert store.import_jsonl(handle, source=str(path), progress=lambda n, c: seen.append((n, c))) == 3
    assert seen and seen[-1][0] == 4
    assert [r.id for r in store.history(old["key"], old["scope"])] == ["rec_00000001", "rec_00000002"]
    assert [lk.id for lk in store.lineage("rec_00000002").links] == ["lnk_1"]
    assert store.get("rec_00000001").status.value == "superseded"


def test_a_large_import_that_switches_to_rebuilding_indexes_keeps_them_and_the_guarantee(tmp_path, monkeypatch):
    monkeypatch.setattr(SQLiteStore, "BULK_REINDEX_AFTER", 10)
    store = SQLiteStore(tmp_path / "s.db")
    try:
        store.import_jsonl(lines_of(record_line(n) for n in range(1, 6)))  # below the switch
        assert store.import_jsonl(lines_of(record_line(n) for n in range(6, 40000))) == 39994
        assert store.one_active_index_ok()
        names = {row[0] for row in store._conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"sw_records_one_active", "sw_records_active_scope", "sw_records_active_key",
                "sw_records_history"} <= names
        assert store.count() == 39999
        assert store.get_active("project.setting_7", "repo:github.com/acme/app0@main").id == "rec_00000007"
    finally:
        store.close()


def test_a_duplicate_active_record_after_the_switch_names_its_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(SQLiteStore, "BULK_REINDEX_AFTER", 10)
    store = SQLiteStore(tmp_path / "s.db")
    try:
        items = [record_line(n) for n in range(1, 30000)]
        items.append(record_line(99_999_999, key=items[20000]["key"], scope=items[20000]["scope"]))
        with pytest.raises(ImportFormatError) as info:
            store.import_jsonl(lines_of(items), source="big.jsonl")
        assert info.value.line == 30000
        assert "big.jsonl:30000" in str(info.value) and items[20000]["key"] in str(info.value)
        assert store.count() == 0
        assert store.one_active_index_ok()
    finally:
        store.close()


def test_an_id_twice_and_an_id_already_stored_are_told_apart(store):
    store.import_jsonl(lines_of([record_line(1)]))
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl(lines_of([record_line(2), record_line(1, key="project.other")]), source="x")
    assert info.value.line == 2 and "already in the store" in str(info.value)
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl(lines_of([record_line(3), record_line(3, key="project.other")]), source="x")
    assert info.value.line == 2 and "appears twice" in str(info.value)
    assert store.count() == 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"key": "Not A Key"}, "field key"),
        ({"scope": "repo:"}, "field scope"),
        ({"scope": "nowhere:x"}, "unknown scope kind"),
        ({"value": 3}, "expected a string"),
        ({"value_type": "colour"}, "field value_type"),
        ({"status": "lost"}, "field status"),
        ({"version": 0}, "field version"),
        ({"extra": 1}, "field extra"),
        ({"time": {"observed_at": "2026-01-01T00:00:00", "recorded_at": "2026-01-01T00:00:00Z"}},
         "field time.observed_at"),
        ({"time": {"observed_at": "2026-01-01T00:00:00Z", "recorded_at": "2026-01-01T00:00:00Z",
                   "ttl_seconds": 0}}, "field time.ttl_seconds"),
        ({"provenance": {"source": "import", "authority": "developer", "actor": ""}}, "field provenance.actor"),
        ({"provenance": {"source": "rumour", "authority": "developer", "actor": "a"}}, "field provenance.source"),
        ({"type": "thing"}, "'type' must be 'record' or 'link'"),
    ],
)
def test_every_check_of_a_record_applies_to_an_imported_line(store, change, words):
    bad = record_line(2)
    bad.update(change)
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl(lines_of([record_line(1), bad]), source="bad.jsonl")
    assert info.value.line == 2
    assert words in str(info.value)
    assert store.count() == 0


def test_a_missing_required_field_and_a_non_object_are_named(store):
    missing = record_line(1)
    del missing["provenance"]
    with pytest.raises(ImportFormatError, match="provenance"):
        store.import_jsonl(lines_of([missing]))
    with pytest.raises(ImportFormatError, match="expected a JSON object"):
        store.import_jsonl(["[1, 2]"])
    with pytest.raises(ImportFormatError, match="not JSON"):
        store.import_jsonl(["{oops"])


def test_the_key_schema_is_checked_on_import(tmp_path):
    class Schema:
        def key_type(self, key):
            return KeyType(ValueType.ENUM, choices=("pip", "uv")) if key.startswith("project.setting_") else None

    store = SQLiteStore(tmp_path / "s.db", key_schema=Schema())
    try:
        with pytest.raises(ImportFormatError, match="type enum"):
            store.import_jsonl(lines_of([record_line(1)]))  # a string where the schema says enum
        with pytest.raises(ImportFormatError, match="one of pip, uv"):
            store.import_jsonl(lines_of([record_line(1, value="poetry", value_type="enum")]))
        with pytest.raises(ImportFormatError, match="does not declare"):
            store.import_jsonl(lines_of([record_line(1, key="other.key", value_type="enum", value="pip")]))
        assert store.import_jsonl(lines_of([record_line(1, value="uv", value_type="enum")])) == 1
    finally:
        store.close()


def test_record_import_cli_streams_a_file_and_draws_progress_on_stderr(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(record_line(n, key="project.test_command", value="pytest",
                                                   scope=f"repo:github.com/acme/app{n}") for n in range(1, 2001))) + "\n")
    db = tmp_path / "s.db"
    env = {**os.environ, "STATEWISE_STORE": str(db)}
    result = subprocess.run(
        [sys.executable, "-m", "statewise", "record", "import", "--progress", str(path)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "imported 2000 lines" in result.stdout
    assert "100%" in result.stderr and "2,000 lines" in result.stderr
    store = SQLiteStore(db)
    try:
        assert store.count() == 2000
    finally:
        store.close()


def test_record_import_cli_failure_names_the_line_and_imports_nothing(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(record_line(1, key="project.test_command", value="pytest")) + "\n{broken\n")
    db = tmp_path / "s.db"
    result = subprocess.run(
        [sys.executable, "-m", "statewise", "--store", str(db), "record", "import", str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode != 0
    assert f"{path}:2" in result.stderr
    assert Path(db).exists()
    store = SQLiteStore(db)
    try:
        assert store.count() == 0
    finally:
        store.close()


# --- the fast validator against the reference path --------------------------------------


def test_the_fast_validators_literals_are_the_enums_values():
    from typing import get_args

    from statewise.records import Authority, LinkKind, RecordStatus, SourceKind
    from statewise.store import bulk

    pairs = [(bulk._SourceName, SourceKind), (bulk._AuthorityName, Authority), (bulk._TypeName, ValueType),
             (bulk._StatusName, RecordStatus), (bulk._LinkKindName, LinkKind)]
    for literal, enum in pairs:
        assert set(get_args(literal)) == {member.value for member in enum}


def varied_lines() -> list[dict]:
    """Lines whose timestamps, scopes and evidence take every form the fast path treats
    apart: the stored form, +00:00, another offset, no fraction, day 29 to 31, a scope to be
    made canonical."""
    stored = "2026-01-31T10:20:30.123456Z"
    lines = [
        record_line(1, time={"observed_at": stored, "recorded_at": "2026-03-29T23:59:59.000001Z"}),
        record_line(2, time={"observed_at": "2026-01-01T00:00:00+00:00", "recorded_at": "2026-01-01T01:00:00+02:00",
                             "verified_at": "2026-01-02T00:00:00Z", "ttl_seconds": 60}),
        record_line(3, status="superseded", superseded_by="rec_00000004", version=3, status_reason="corrected",
                    status_changed_at="2024-02-29T12:00:00.000000Z"),
        record_line(4, key="project.setting_3", scope="repo:github.com/acme/app0@main", supersedes="rec_00000003",
                    value=["a", "é"], value_type="list"),
        record_line(5, scope="workspace:/home/alice//src/./app", value=True, value_type="bool"),
        record_line(6, value=7, value_type="int", provenance={"source": "observation", "authority": "machine",
                                                               "actor": "verifier.x", "reference": "ref-1"}),
    ]
    for n, line in enumerate(lines, start=1):
        line["id"] = f"rec_{n:08d}"
    evidence = {"key": "project.setting_3", "value": ["a", "é"], "value_type": "list",
                "scope": "workspace:/home/alice/src/app/", "source": "observation", "authority": "machine",
                "actor": "verifier.project", "observed_at": "2026-01-30T00:00:00.000000Z"}
    lines += [
        {"type": "link", "id": "lnk_1", "kind": "supersede", "from_record": "rec_00000003",
         "to_record": "rec_00000004", "scope": "repo:github.com/acme/app0@main", "evidence": evidence,
         "reason": "corrected", "actor": "verifier.project", "created_at": "2026-01-30T00:00:01.500000Z"},
        {"type": "link", "id": "lnk_2", "kind": "verify", "from_record": "rec_00000001", "to_record": None,
         "scope": MAIN, "evidence": {**evidence, "observed_at": "2026-01-30T05:00:00+05:00", "detail": "seen"},
         "actor": "verifier.project", "created_at": "2026-01-30T00:00:02-03:00"},
        {"type": "link", "id": "lnk_3", "kind": "retract", "from_record": "rec_00000002", "to_record": None,
         "scope": MAIN, "reason": "withdrawn", "actor": "alice", "created_at": "2026-12-31T23:59:59.999999Z"},
    ]
    return lines


def test_imported_rows_are_those_of_the_model_path(store):
    # The slow path: each line validated as a Record or Link model and encoded by the store's
    # own per-record encoder, as put and the replay of a refused batch write it.
    items = varied_lines()
    expected_records = [Record.model_validate({k: v for k, v in item.items() if k != "type"})
                        for item in items if item["type"] == "record"]
    expected_links = [Link.model_validate({k: v for k, v in item.items() if k != "type"})
                      for item in items if item["type"] == "link"]
    assert store.import_jsonl(lines_of(items)) == len(items)
    assert list(store.records()) == expected_records
    assert list(store.all_links()) == expected_links
    assert store.get("rec_00000005").scope == "workspace:/home/alice/src/app"  # made canonical
    assert expected_links[0].evidence.scope == "workspace:/home/alice/src/app"
    assert [r.id for r in store.lineage("rec_00000004").records] == ["rec_00000003", "rec_00000004"]
    if isinstance(store, SQLiteStore):
        from statewise.store.sql import LINK_COLUMNS, RECORD_COLUMNS

        rows = store._conn.execute(f"SELECT {RECORD_COLUMNS} FROM sw_records ORDER BY seq").fetchall()
        assert rows == [store._record_params(record) for record in expected_records]
        rows = store._conn.execute(f"SELECT {LINK_COLUMNS} FROM sw_links ORDER BY seq").fetchall()
        assert rows == [store._link_params(link) for link in expected_links]
        # A link's created_at may lack a zone (Link allows it); it is stored as the model path does.
        naive = {**items[-1], "id": "lnk_9", "created_at": "2026-01-30T00:00:02"}
        store.import_jsonl(lines_of([naive]))
        row = store._conn.execute(f"SELECT {LINK_COLUMNS} FROM sw_links WHERE id = 'lnk_9'").fetchone()
        assert row == store._link_params(Link.model_validate({k: v for k, v in naive.items() if k != "type"}))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"time": {"observed_at": "2026-02-30T00:00:00.000000Z", "recorded_at": "2026-01-01T00:00:00Z"}},
         "field time.observed_at"),
        ({"status_changed_at": "2025-02-29T00:00:00.000000Z"}, "field status_changed_at"),
        ({"time": {"observed_at": "0999-01-01T00:00:00Z", "recorded_at": "2026-13-01T00:00:00.000000Z"}},
         "field time.recorded_at"),
    ],
)
def test_a_stored_form_timestamp_that_is_not_a_date_is_refused(store, change, words):
    bad = record_line(2)
    bad.update(change)
    with pytest.raises(ImportFormatError) as info:
        store.import_jsonl(lines_of([record_line(1), bad]), source="bad.jsonl")
    assert info.value.line == 2 and words in str(info.value)
    assert store.count() == 0


def test_a_link_whose_evidence_is_wrong_names_its_line(store):
    link = varied_lines()[6]
    wrong_value = {**link, "evidence": {**link["evidence"], "value": "not a list"}}
    wrong_key = {**link, "evidence": {**link["evidence"], "key": "Bad Key"}}
    for bad, words in ((wrong_value, "expected a list of strings"), (wrong_key, "key")):
        with pytest.raises(ImportFormatError) as info:
            store.import_jsonl(lines_of([record_line(1), bad]), source="links.jsonl")
        assert info.value.line == 2 and words in str(info.value)
    assert store.count() == 0 and list(store.all_links()) == []


def test_a_failed_import_leaves_nothing_and_the_fixed_file_then_imports_whole(store, tmp_path):
    items = [record_line(n) for n in range(1, 12001)]  # more than two batches
    items[11000]["provenance"] = {"source": "import", "authority": "nobody", "actor": "alice"}
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(items)) + "\n")
    with open(path, encoding="utf-8") as handle, pytest.raises(ImportFormatError) as info:
        store.import_jsonl(handle, source=str(path))
    assert info.value.line == 11001 and "field provenance.authority" in str(info.value)
    assert store.count() == 0 and list(store.all_links()) == []
    items[11000] = record_line(11001)
    path.write_text("\n".join(lines_of(items)) + "\n")
    with open(path, encoding="utf-8") as handle:
        assert store.import_jsonl(handle, source=str(path)) == 12000
    assert store.count() == 12000


def test_a_duplicate_active_record_in_a_store_emptied_by_restore_names_its_line(tmp_path):
    # A restore empties the table but AUTOINCREMENT keeps counting: the line named must still
    # be the duplicate's, not one shifted by the deleted rows.
    store = SQLiteStore(tmp_path / "s.db")
    try:
        store.import_jsonl(lines_of(record_line(n) for n in range(1, 500)))
        empty = tmp_path / "empty.jsonl"
        empty.write_text("")
        store.restore(empty)
        assert store.count() == 0
        items = [record_line(n) for n in range(1000, 1300)]
        items.append(record_line(5000, key=items[120]["key"], scope=items[120]["scope"]))
        with pytest.raises(ImportFormatError) as info:
            store.import_jsonl(lines_of(items), source="again.jsonl")
        assert info.value.line == 301 and items[120]["key"] in str(info.value)
        assert store.count() == 0 and store.one_active_index_ok()
    finally:
        store.close()


# --- parsing in a second process ---------------------------------------------------------


def test_a_file_parsed_in_a_second_process_imports_the_same_rows(store, tmp_path, monkeypatch):
    monkeypatch.setattr(type(store), "PARALLEL_IMPORT_BYTES", 0)  # every file goes the parallel way
    items = varied_lines() + [record_line(n) for n in range(10, 12010)]  # more than two batches
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(items)) + "\n")
    seen = []
    with open(path, encoding="utf-8") as handle:
        assert store.import_jsonl(handle, source=str(path), progress=lambda n, c: seen.append(n)) == len(items)
    assert seen[-1] == len(items) and len(seen) == 3
    expected = [Record.model_validate({k: v for k, v in item.items() if k != "type"})
                for item in items if item["type"] == "record"]
    assert list(store.records()) == expected
    assert [link.id for link in store.all_links()] == ["lnk_1", "lnk_2", "lnk_3"]
    assert store._parse_apart(iter(["{}"])) is False  # not a file: parsed here


def test_a_bad_line_found_by_the_parsing_process_names_it_and_writes_nothing(store, tmp_path, monkeypatch):
    monkeypatch.setattr(type(store), "PARALLEL_IMPORT_BYTES", 0)
    items = [record_line(n) for n in range(1, 9001)]
    items[7000]["value"] = 3  # after the first batch was written
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(items)) + "\n")
    with open(path, encoding="utf-8") as handle, pytest.raises(ImportFormatError) as info:
        store.import_jsonl(handle, source=str(path))
    assert info.value.line == 7001 and "expected a string" in str(info.value)
    assert store.count() == 0


def test_a_parsing_process_killed_mid_import_fails_it_and_writes_nothing(store, tmp_path, monkeypatch):
    import multiprocessing
    import signal

    from statewise.errors import StoreUnavailableError

    monkeypatch.setattr(type(store), "PARALLEL_IMPORT_BYTES", 0)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(record_line(n) for n in range(1, 60001))) + "\n")

    def kill_the_parser(lines: int, chars: int) -> None:
        for child in multiprocessing.active_children():
            os.kill(child.pid, signal.SIGKILL)

    with open(path, encoding="utf-8") as handle, pytest.raises(StoreUnavailableError, match="parsing process"):
        store.import_jsonl(handle, source=str(path), progress=kill_the_parser)
    assert store.count() == 0 and not multiprocessing.active_children()
    with open(path, encoding="utf-8") as handle:  # the store is whole: the same file imports
        assert store.import_jsonl(handle, source=str(path)) == 60000
