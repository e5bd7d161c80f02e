"""A process killed in the middle of a write leaves the store as it was.

A child process (a separate Python interpreter) replaces ``statewise.store.sql.checkpoint``
so that it stops at one named point inside a write transaction: after the old record was
marked and before the new one is inserted. The parent waits until the child is there,
checks that the half-done write is invisible and holds the writer's lock, kills the child
with SIGKILL, then reopens the store and checks that nothing of the write survived, that
the lock was released, that the same write now succeeds, and that ``store check`` passes.

A second test kills children in a loop (SIGKILL, half of them stopped inside a supersede
transaction, half at a random moment) and then requires ``store check`` to pass and every
acknowledged write to be in the store.
"""

from __future__ import annotations

import json
import os
import random
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
from statewise.store.check import check_store
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
        report = check_store(store)
        assert report.ok, report.violations
    finally:
        store.close()


# --- kill -9 at random moments, in a loop ------------------------------------------------

#: How many children are killed per backend; STATEWISE_CRASH_KILLS raises it for a longer run.
LOOP_KILLS = int(os.environ.get("STATEWISE_CRASH_KILLS", "20"))
#: The loop stops early past this many seconds, so the test stays within CI's budget.
LOOP_BUDGET = float(os.environ.get("STATEWISE_CRASH_BUDGET", "15"))

LOOP_CHILD = """
import json, os, sys
from datetime import UTC, datetime

from statewise.errors import ConflictError, StoreLockedError
from statewise.records import Evidence
from statewise.store import open_store

import time

import statewise.store.sql as store_sql

location, key, acks, stop_at, marker = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
n = 0


def stop_inside(name):
    # On write number stop_at, stop between marking the old record and inserting the new one,
    # say so, and wait for the kill: a kill certainly inside the write transaction.
    if n == stop_at and name == "supersede:marked":
        with open(marker + ".tmp", "w") as flag:
            flag.write(str(n))
        os.replace(marker + ".tmp", marker)
        time.sleep(600)


store_sql.checkpoint = stop_inside
store = open_store(location)
with open(acks, "a", encoding="utf-8") as out:
    while True:
        n += 1
        # Alternate a supersede in place with a narrowing, so both write paths get killed.
        scope = "global" if n % 3 else "workspace:/w/a"
        current = store.get_active(key, "global")
        evidence = Evidence(key=key, value=f"pytest -k {os.getpid()}-{n}", value_type="string", scope=scope,
                            source="developer", authority="developer", actor="loop",
                            observed_at=datetime.now(UTC), detail="loop")
        try:
            result = store.supersede(current.id, evidence, expected_version=current.version)
        except (ConflictError, StoreLockedError):
            continue  # lost a race, or a killed predecessor's lock is not released yet: retry
        # Acknowledged only after the commit returned: each line is a write that must survive.
        out.write(json.dumps([result.new.id, result.new.value]) + "\\n")
        out.flush()
"""


def test_kill_9_during_supersede_in_a_loop_leaves_a_store_that_passes_check(backend, store_location, tmp_path):
    with open_store(store_location) as store:
        store.put(_draft(ORIGINAL))
    script = tmp_path / "loop.py"
    script.write_text(LOOP_CHILD)
    acks = tmp_path / "acks.jsonl"
    acks.touch()
    rng = random.Random(0x5EED)
    kills = inside = 0
    started = time.monotonic()
    while kills < LOOP_KILLS and time.monotonic() - started < LOOP_BUDGET:
        before = acks.stat().st_size
        marker = tmp_path / f"inside-{kills}"
        # Every other child stops inside its 2nd-6th write and is killed there; the others are
        # killed at a random moment after their first acknowledged write, wherever they are.
        stop_at = rng.randint(2, 6) if kills % 2 else 0
        child = subprocess.Popen([sys.executable, str(script), store_location, KEY, str(acks), str(stop_at),
                                  str(marker)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                 cwd=tmp_path)
        try:
            deadline = time.monotonic() + PAUSE_TIMEOUT
            while (not marker.exists()) if stop_at else acks.stat().st_size == before:
                assert child.poll() is None, f"loop child exited early:\n{child.stderr.read().decode()}"
                assert time.monotonic() < deadline, "the loop child never reached its write"
                time.sleep(0.002)
            if not stop_at:
                time.sleep(rng.uniform(0, 0.03))
            os.kill(child.pid, signal.SIGKILL)
            inside += bool(stop_at)
            assert child.wait(timeout=KILL_TIMEOUT) == -signal.SIGKILL
            kills += 1
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=KILL_TIMEOUT)
            child.stderr.close()
    elapsed = time.monotonic() - started
    assert kills >= min(LOOP_KILLS, 5), f"only {kills} kills in {elapsed:.1f}s"

    # A write killed after its commit but before its line was written is in the store and
    # unacknowledged; a torn last line is such a write. Every complete line must be there.
    acknowledged = [json.loads(line) for line in acks.read_text().splitlines() if line.endswith("]")]
    with _open(backend, store_location, wait=REDO_LOCK_WAIT) as store:  # opening checks integrity
        report = check_store(store)
        values = {r.id: r.value for r in store.records()}
        active_global = store.get_active(KEY, "global")
        lost = [rid for rid, value in acknowledged if values.get(rid) != value]
        # The store still takes writes after all those kills.
        store.supersede(active_global.id, _evidence("pytest --after", "global"),
                        expected_version=active_global.version)
    print(f"{backend}: {kills} kills ({inside} inside a write) in {elapsed:.1f} s, {len(acknowledged)} acknowledged writes, "
          f"{len(lost)} lost, {len(report.violations)} violations, {report.records} records")
    assert report.ok, report.violations
    assert lost == []
    assert len(acknowledged) >= kills
    assert inside >= kills // 2

    # The command-line check, as cron or CI runs it: a real process, exit status 0.
    done = subprocess.run([sys.executable, "-m", "statewise.cli", "--store", store_location, "store", "check",
                           "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] is True
