"""A process killed in the middle of a write leaves the store as it was.

A child process (a separate Python interpreter) replaces ``statewise.store.sql.checkpoint``
so that it stops at one named point inside a write transaction: after the old record was
marked and before the new one is inserted. The parent waits until the child is there,
checks that the half-done write is invisible and holds the writer's lock, kills the child
with SIGKILL, then reopens the store and checks that nothing of the write survived, that
the lock was released, and that the same write now succeeds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from statewise.errors import StoreLockedError
from statewise.records import Evidence, LinkKind, Provenance, RecordDraft, RecordStatus
from statewise.store import open_store
from statewise.store.base import Store
from statewise.store.postgres import PostgresStore, split_schema
from statewise.store.sqlite import SQLiteStore

KEY = "project.test_command"
NARROW = "workspace:/w/a"
ORIGINAL = "pytest"
CHILD_VALUE = "pytest -k child"  # what the killed write would have stored
PAUSE_TIMEOUT = 30.0  # for the child to reach its checkpoint
KILL_TIMEOUT = 10.0  # for the killed child to be reaped
RELEASE_TIMEOUT = 10.0  # for PostgreSQL to drop the dead client's connection
REDO_LOCK_WAIT = 5.0  # the redone write must get the lock within this

EXIT_NOT_STOPPED = 4  # the checkpoint never fired and the write committed

CHILD = """
import json, os, sys, time
from pathlib import Path

import statewise.store.sql as store_sql
from statewise.records import Evidence, RecordDraft
from statewise.store import open_store

location, spec = sys.argv[1], json.loads(sys.argv[2])
marker = Path(spec["marker"])


def stop_here(name):
    # Fault injection: at the named point, say so and wait to be killed, mid-transaction.
    if name == spec["checkpoint"]:
        tmp = marker.with_name(marker.name + ".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "checkpoint": name}))
        os.replace(tmp, marker)
        time.sleep(600)


store_sql.checkpoint = stop_here
store = open_store(location)
if spec["op"] == "supersede":
    store.supersede(spec["record_id"], Evidence.model_validate(spec["evidence"]),
                    expected_version=spec["version"], reason="child")
elif spec["op"] == "put":
    store.put(RecordDraft.model_validate(spec["draft"]), replace=True, reason="child")
elif spec["op"] == "revert":
    store.revert(spec["record_id"], reason="child", actor="child")
else:
    raise SystemExit(f"unknown op {spec['op']!r}")
sys.exit(4)
"""


def _provenance(actor: str = "parent") -> Provenance:
    return Provenance(source="developer", authority="developer", actor=actor)


def _draft(value: str, scope: str = "global") -> RecordDraft:
    return RecordDraft(key=KEY, value=value, scope=scope, value_type="string", provenance=_provenance())


def _evidence(value: str, scope: str, actor: str = "parent") -> Evidence:
    return Evidence(
        key=KEY, value=value, value_type="string", scope=scope, source="developer",
        authority="developer", actor=actor, observed_at=datetime.now(UTC), detail="a developer said so",
    )


def _prepare(store: Store, case: str) -> dict:
    """Set the store up for ``case``; return what the child does and what it would change.

    ``watched`` is the record the interrupted write marks (or, for a narrowing that
    replaces nothing, only locks); ``scope`` is the scope the write targets.
    """
    base = store.put(_draft(ORIGINAL))
    child_evidence = _evidence(CHILD_VALUE, "global", actor="child").model_dump(mode="json")
    if case == "supersede":
        return {"checkpoint": "supersede:marked", "op": "supersede", "record_id": base.id,
                "version": base.version, "evidence": child_evidence, "watched": base.id, "scope": "global"}
    if case == "narrow":
        # Record at global, evidence at a workspace: the global record stays, a narrow one is added.
        return {"checkpoint": "supersede:marked", "op": "supersede", "record_id": base.id,
                "version": base.version, "scope": NARROW, "watched": base.id,
                "evidence": _evidence(CHILD_VALUE, NARROW, actor="child").model_dump(mode="json")}
    if case == "narrow-replacing":
        # An earlier narrowing left a workspace record; narrowing again marks it superseded.
        earlier = store.supersede(base.id, _evidence("pytest tests/a", NARROW), expected_version=base.version)
        assert earlier.link.kind is LinkKind.NARROW
        return {"checkpoint": "supersede:marked", "op": "supersede", "record_id": base.id,
                "version": base.version, "scope": NARROW, "watched": earlier.new.id,
                "evidence": _evidence(CHILD_VALUE, NARROW, actor="child").model_dump(mode="json")}
    if case == "put-replace":
        return {"checkpoint": "put:replaced", "op": "put", "scope": "global", "watched": base.id,
                "draft": _draft(CHILD_VALUE).model_dump(mode="json")}
    if case == "revert":
        repair = store.supersede(base.id, _evidence("pytest -x", "global"), expected_version=base.version)
        return {"checkpoint": "revert:marked", "op": "revert", "record_id": repair.new.id,
                "scope": "global", "watched": repair.new.id}
    raise AssertionError(case)


def _redo(store: Store, spec: dict) -> None:
    """Do in the parent the write the child was killed in, and check its outcome."""
    watched_id = spec["watched"]
    if spec["op"] == "supersede":
        result = store.supersede(spec["record_id"], Evidence.model_validate(spec["evidence"]),
                                 expected_version=spec["version"], reason="redo")
        assert result.new.value == CHILD_VALUE and result.new.scope == spec["scope"]
        if spec["scope"] == "global":
            assert result.link.kind is LinkKind.SUPERSEDE
            assert store.get(watched_id).superseded_by == result.new.id
        else:
            assert result.link.kind is LinkKind.NARROW
            assert store.get(spec["record_id"]).status is RecordStatus.ACTIVE  # in force elsewhere
            if watched_id != spec["record_id"]:
                assert result.replaced is not None and result.replaced.id == watched_id
                assert store.get(watched_id).superseded_by == result.new.id
    elif spec["op"] == "put":
        new = store.put(RecordDraft.model_validate(spec["draft"]), replace=True, reason="redo")
        assert new.supersedes == watched_id
        assert store.get(watched_id).superseded_by == new.id
    else:
        restored = store.revert(spec["record_id"], reason="redo", actor="parent")
        assert restored is not None and restored.value == ORIGINAL
        assert store.get(watched_id).superseded_by == restored.id
    active = store.get_active(KEY, spec["scope"])
    assert active is not None
    assert active.value == (ORIGINAL if spec["op"] == "revert" else CHILD_VALUE)


def _state(store: Store) -> tuple[list[dict], list[dict]]:
    return [r.model_dump() for r in store.records()], [lk.model_dump() for lk in store.all_links()]


def _open(backend: str, location: str, wait: float) -> Store:
    """A store whose writers give up on a held lock after ``wait`` seconds."""
    if backend == "sqlite":
        return SQLiteStore(location, timeout=wait)
    return PostgresStore(location, lock_timeout=wait)


def _connections_named(location: str, application_name: str) -> int:
    conninfo, _ = split_schema(location)
    with psycopg.connect(conninfo, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application_name,)
        ).fetchone()
    return int(row[0])


def _try_same_write(store: Store, spec: dict) -> None:
    if spec["op"] == "supersede":
        store.supersede(spec["record_id"], Evidence.model_validate(spec["evidence"]),
                        expected_version=spec["version"])
    elif spec["op"] == "put":
        store.put(RecordDraft.model_validate(spec["draft"]), replace=True)
    else:
        store.revert(spec["record_id"], reason="contender", actor="parent")


@pytest.mark.parametrize("case", ["supersede", "narrow", "narrow-replacing", "put-replace", "revert"])
def test_a_write_killed_at_its_checkpoint_leaves_the_store_as_it_was(backend, store_location, tmp_path, case):
    with open_store(store_location) as store:
        spec = {**_prepare(store, case), "case": case, "marker": str(tmp_path / "paused.json")}
        before = _state(store)
        watched_before = store.get(spec["watched"])
        history_before = [r.id for r in store.history(KEY, spec["scope"])]
        counts_before = (store.count(), store.count(status="active"))
    assert watched_before.status is RecordStatus.ACTIVE

    child_location = store_location
    application_name = f"sw_crash_{uuid.uuid4().hex[:12]}"
    if backend == "postgres":
        child_location = f"{store_location}&application_name={application_name}"

    # Opened before the child takes the write lock (opening a SQLite store takes it briefly).
    reader = open_store(store_location)
    contender = _open(backend, store_location, wait=0.3)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    log_path = tmp_path / "child.log"
    marker = Path(spec["marker"])
    with open(log_path, "wb") as log:
        child = subprocess.Popen(
            [sys.executable, str(script), child_location, json.dumps(spec)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp_path,
        )
    try:
        deadline = time.monotonic() + PAUSE_TIMEOUT
        while not marker.exists():
            if child.poll() is not None:
                why = "the checkpoint never fired" if child.returncode == EXIT_NOT_STOPPED else "it failed"
                pytest.fail(f"child exited with {child.returncode} ({why}):\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"child not at {spec['checkpoint']} after {PAUSE_TIMEOUT}s:\n{log_path.read_text()}")
            time.sleep(0.01)
        paused = json.loads(marker.read_text())
        assert paused == {"pid": child.pid, "checkpoint": spec["checkpoint"]}

        # Mid-write: others still see the store as it was, and the writer holds the lock.
        assert _state(reader) == before
        with pytest.raises(StoreLockedError):
            _try_same_write(contender, spec)

        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=KILL_TIMEOUT) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=KILL_TIMEOUT)
        reader.close()
        contender.close()

    if backend == "postgres":
        # The server notices the dead client and ends its backend, rolling back and
        # releasing the row lock.
        deadline = time.monotonic() + RELEASE_TIMEOUT
        while _connections_named(store_location, application_name):
            assert time.monotonic() < deadline, f"the killed child's connection outlived it by {RELEASE_TIMEOUT}s"
            time.sleep(0.02)

    store = _open(backend, store_location, wait=REDO_LOCK_WAIT)
    try:
        # Nothing of the killed write survived.
        assert _state(store) == before
        watched = store.get(spec["watched"])
        assert watched.status is RecordStatus.ACTIVE
        assert watched.value == watched_before.value
        assert watched.version == watched_before.version
        assert watched.superseded_by is None
        assert [r.id for r in store.history(KEY, spec["scope"])] == history_before
        assert (store.count(), store.count(status="active")) == counts_before
        assert all(r.value != CHILD_VALUE for r in store.records())
        if case in ("supersede", "put-replace"):
            assert history_before == [watched.id]
            assert list(store.all_links()) == []

        # The lock is free and the same write now succeeds, promptly.
        started = time.monotonic()
        _redo(store, spec)
        assert time.monotonic() - started < REDO_LOCK_WAIT
        assert len(store.history(KEY, spec["scope"])) == len(history_before) + 1

        # And a fresh supersede of whatever is active there works too.
        active = store.get_active(KEY, spec["scope"])
        fresh = store.supersede(
            active.id, _evidence("pytest --fresh", spec["scope"]), expected_version=active.version
        )
        assert store.get_active(KEY, spec["scope"]) == fresh.new
        assert store.count(status="active") == counts_before[1] + (1 if case == "narrow" else 0)
    finally:
        store.close()
