"""Real OS processes racing on one record, on both backends.

Eight processes supersede the same record at once; eight processes ``put`` the same
(key, scope) at once; eight processes increment one counter record 15 times each, and no
update may be lost. Each child is a separate Python interpreter with its own connection,
released together by a start file, so the database (not this process) arbitrates the race.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from statewise.records import LinkKind, Provenance, RecordDraft, RecordStatus
from statewise.store import open_store
from statewise.store.check import check_store

WORKERS = 8
KEY = "project.test_command"
SCOPE = "global"
INITIAL = "pytest"
START_TIMEOUT = 60.0  # for every child to open its store and say it is ready
RUN_TIMEOUT = 60.0  # for every child to finish after the start signal

EXIT_OK = 0
EXIT_GAVE_UP = 2  # supersede: still conflicting after every retry
EXIT_NO_START = 3  # the start signal never came
EXIT_EXISTS = 10  # put: ActiveRecordExistsError

# Shared by both children: open the store, say ready, wait for the start file.
_PRELUDE = """
import json, os, random, sys, time
from datetime import UTC, datetime
from pathlib import Path

from statewise.errors import ActiveRecordExistsError, ConflictError
from statewise.records import Evidence, Provenance, RecordDraft
from statewise.store import open_store
from statewise.store.check import check_store

location, key, scope, worker, sync = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
value = f"pytest -k worker{worker}"
store = open_store(location)


def report(**result):
    tmp = sync / f"result-{worker}.tmp"
    tmp.write_text(json.dumps({"worker": worker, "value": value, **result}))
    os.replace(tmp, sync / f"result-{worker}.json")


(sync / f"ready-{worker}").touch()
deadline = time.monotonic() + 60
while not (sync / "go").exists():
    if time.monotonic() > deadline:
        sys.exit(3)
    time.sleep(0.001)
"""

SUPERSEDE_CHILD = _PRELUDE + """
evidence = Evidence(
    key=key, value=value, value_type="string", scope=scope, source="developer",
    authority="developer", actor=f"worker{worker}", observed_at=datetime.now(UTC),
    detail=f"worker {worker} says so",
)
conflicts = 0
for attempt in range(1, 201):
    current = store.get_active(key, scope)
    if current is None:
        raise SystemExit(f"no active record for {key} in {scope} (attempt {attempt})")
    try:
        result = store.supersede(current.id, evidence, expected_version=current.version, reason=f"worker {worker}")
    except ConflictError:  # StaleVersionError: another worker got there first
        conflicts += 1
        time.sleep(random.uniform(0, 0.005))
        continue
    report(old_id=result.old.id, new_id=result.new.id, link_id=result.link.id,
           attempts=attempt, conflicts=conflicts)
    store.close()
    sys.exit(0)
store.close()
sys.exit(2)
"""

PUT_CHILD = _PRELUDE + """
draft = RecordDraft(
    key=key, value=value, scope=scope, value_type="string",
    provenance=Provenance(source="developer", authority="developer", actor=f"worker{worker}"),
)
try:
    record = store.put(draft)
except ActiveRecordExistsError as error:
    report(outcome="exists", existing_id=error.record_id)
    store.close()
    sys.exit(10)
report(outcome="put", record_id=record.id)
store.close()
sys.exit(0)
"""


def _race(tmp_path: Path, source: str, location: str, key: str = KEY) -> tuple[dict[int, int], dict[int, dict]]:
    """Run WORKERS copies of ``source`` on ``key`` released together; return exit codes and results."""
    script = tmp_path / "child.py"
    script.write_text(source)
    sync = tmp_path / "sync"
    sync.mkdir()
    procs: dict[int, subprocess.Popen] = {}
    logs: dict[int, Path] = {}
    try:
        for worker in range(WORKERS):
            logs[worker] = tmp_path / f"child-{worker}.log"
            with open(logs[worker], "wb") as log:
                procs[worker] = subprocess.Popen(
                    [sys.executable, str(script), location, key, SCOPE, str(worker), str(sync)],
                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp_path,
                )
        deadline = time.monotonic() + START_TIMEOUT
        while len(list(sync.glob("ready-*"))) < WORKERS:
            early = {w: p.returncode for w, p in procs.items() if p.poll() is not None}
            assert not early, f"children exited before the start: {early}\n{_logs(logs)}"
            assert time.monotonic() < deadline, f"children not ready after {START_TIMEOUT}s\n{_logs(logs)}"
            time.sleep(0.01)
        (sync / "go").touch()
        deadline = time.monotonic() + RUN_TIMEOUT
        codes: dict[int, int] = {}
        for worker, proc in procs.items():
            try:
                codes[worker] = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                message = f"worker {worker} still running {RUN_TIMEOUT}s after the start\n{_logs(logs)}"
                raise AssertionError(message) from None
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    results = {
        worker: json.loads((sync / f"result-{worker}.json").read_text())
        for worker in range(WORKERS)
        if (sync / f"result-{worker}.json").exists()
    }
    return codes, results


def _logs(logs: dict[int, Path]) -> str:
    return "\n".join(f"--- worker {w} ---\n{p.read_text(errors='replace')}" for w, p in logs.items() if p.exists())


def _draft(value: str) -> RecordDraft:
    return RecordDraft(
        key=KEY, value=value, scope=SCOPE, value_type="string",
        provenance=Provenance(source="developer", authority="developer", actor="parent"),
        observed_at=datetime.now(UTC),
    )


def test_eight_processes_superseding_one_record_leave_one_linear_chain(store_location, tmp_path):
    with open_store(store_location) as store:
        first = store.put(_draft(INITIAL))

    codes, results = _race(tmp_path, SUPERSEDE_CHILD, store_location)

    assert codes == {w: EXIT_OK for w in range(WORKERS)}, _logs({w: tmp_path / f"child-{w}.log" for w in codes})
    assert sorted(results) == list(range(WORKERS))

    with open_store(store_location) as store:
        active = store.get_active(KEY, SCOPE)
        history = store.history(KEY, SCOPE)
        lineage = store.lineage(first.id)
        active_count = store.count(status="active")
        total_count = store.count()

    # Exactly one active record, and it is the last one of the history.
    assert active_count == 1
    assert total_count == WORKERS + 1
    assert active is not None
    assert len(history) == WORKERS + 1
    assert [r.status for r in history] == [RecordStatus.SUPERSEDED] * WORKERS + [RecordStatus.ACTIVE]
    assert history[0].id == first.id and history[0].value == INITIAL
    assert history[-1].id == active.id

    # Following the pointers from the first record walks one linear chain through all nine,
    # in the order history reports them.
    by_id = {r.id: r for r in history}
    chain = [first.id]
    while by_id[chain[-1]].superseded_by is not None:
        following = by_id[chain[-1]].superseded_by
        assert following in by_id, f"{chain[-1]} points to {following}, which is not in the history"
        assert following not in chain, f"cycle at {following}"
        assert by_id[following].supersedes == chain[-1]
        chain.append(following)
    assert chain == [r.id for r in history]
    assert by_id[first.id].supersedes is None
    for older, newer in zip(history, history[1:], strict=False):
        assert older.version == 2  # put at 1, superseded exactly once
        assert older.superseded_by == newer.id and newer.supersedes == older.id
    assert active.version == 1

    # Each worker's supersession is one step of that chain, as it reported it.
    steps = {(r["old_id"], r["new_id"]) for r in results.values()}
    assert steps == set(zip(chain, chain[1:], strict=False))
    for r in results.values():
        assert by_id[r["new_id"]].value == r["value"]

    # No evidence is lost: every worker's value appears exactly once as a record value and
    # exactly once as the evidence of a supersede link, on the link into its record.
    values = [f"pytest -k worker{w}" for w in range(WORKERS)]
    record_values = [r.value for r in history]
    assert sorted(record_values) == sorted([INITIAL, *values])
    assert [r.id for r in lineage.records] == chain
    assert len(lineage.links) == WORKERS
    assert all(link.kind is LinkKind.SUPERSEDE for link in lineage.links)
    evidence_values = [link.evidence.value for link in lineage.links if link.evidence is not None]
    assert sorted(evidence_values) == sorted(values)
    for link in lineage.links:
        assert by_id[link.to_record].value == link.evidence.value
        assert by_id[link.from_record].superseded_by == link.to_record
        assert link.actor == link.evidence.actor
        assert link.evidence.value == f"pytest -k {link.evidence.actor}"
    assert {link.id for link in lineage.links} == {r["link_id"] for r in results.values()}
    with open_store(store_location) as store:
        assert check_store(store).ok


def test_eight_processes_putting_the_same_key_and_scope_leave_exactly_one(store_location, tmp_path):
    with open_store(store_location):
        pass  # create and migrate the store before the race

    codes, results = _race(tmp_path, PUT_CHILD, store_location)

    logs = _logs({w: tmp_path / f"child-{w}.log" for w in codes})
    winners = [w for w, code in codes.items() if code == EXIT_OK]
    losers = [w for w, code in codes.items() if code == EXIT_EXISTS]
    assert len(winners) == 1, f"exit codes {codes}\n{logs}"
    assert len(losers) == WORKERS - 1, f"exit codes {codes}\n{logs}"
    assert sorted(results) == list(range(WORKERS))

    winner = results[winners[0]]
    assert winner["outcome"] == "put"
    for w in losers:
        assert results[w]["outcome"] == "exists"
        # Each loser was told which record holds the (key, scope): the winner's.
        assert results[w]["existing_id"] == winner["record_id"]

    with open_store(store_location) as store:
        active = store.get_active(KEY, SCOPE)
        history = store.history(KEY, SCOPE)
        assert store.count(status="active") == 1
        assert store.count() == 1
        assert list(store.all_links()) == []
    assert active is not None
    assert active.id == winner["record_id"]
    assert active.value == winner["value"]
    assert [r.id for r in history] == [active.id]


# --- lost updates: eight writers incrementing one counter ---------------------------------

INCREMENTS = 15  # per worker; 8 x 15 = 120 contended read-modify-writes per backend
COUNTER_KEY = "test.counter"

COUNTER_CHILD = _PRELUDE + """
# Read-modify-write: read the active counter, supersede it with value + 1 at the version read.
# A StaleVersionError means another worker got in between: read again and retry.
done, conflicts, acked = 0, 0, []
while done < int(os.environ["SW_INCREMENTS"]):
    current = store.get_active(key, scope)
    evidence = Evidence(
        key=key, value=current.value + 1, value_type="int", scope=scope, source="tool_output",
        authority="machine", actor=f"worker{worker}", observed_at=datetime.now(UTC), detail="increment",
    )
    try:
        result = store.supersede(current.id, evidence, expected_version=current.version)
    except ConflictError:
        conflicts += 1
        continue
    done += 1
    acked.append([result.new.id, result.new.value])
report(acked=acked, conflicts=conflicts)
store.close()
"""


def test_eight_writers_incrementing_one_counter_lose_no_update(store_location, tmp_path, monkeypatch):
    monkeypatch.setenv("SW_INCREMENTS", str(INCREMENTS))
    with open_store(store_location) as store:
        first = store.put(RecordDraft(
            key=COUNTER_KEY, value=0, scope=SCOPE, value_type="int",
            provenance=Provenance(source="developer", authority="developer", actor="parent"),
        ))
    started = time.monotonic()
    codes, results = _race(tmp_path, COUNTER_CHILD, store_location, COUNTER_KEY)
    elapsed = time.monotonic() - started
    logs = _logs({w: tmp_path / f"child-{w}.log" for w in codes})
    assert codes == {w: EXIT_OK for w in range(WORKERS)}, logs

    acknowledged = [tuple(pair) for r in results.values() for pair in r["acked"]]
    total = WORKERS * INCREMENTS
    with open_store(store_location) as store:
        active = store.get_active(COUNTER_KEY, SCOPE)
        history = store.history(COUNTER_KEY, SCOPE)
        report = check_store(store)
    lost = total - active.value
    conflicts = sum(r["conflicts"] for r in results.values())
    print(f"{WORKERS} writers x {INCREMENTS} increments on {store_location.split('?')[0]}: "
          f"{lost} lost updates, {conflicts} retried conflicts, {elapsed:.1f} s")
    assert lost == 0
    assert len(acknowledged) == total
    # Every value 0..total appears exactly once, in order, and each acknowledged write is there.
    assert [r.value for r in history] == list(range(total + 1))
    assert history[0].id == first.id
    by_id = {r.id: r.value for r in history}
    assert all(by_id[rid] == value for rid, value in acknowledged)
    assert report.ok, report.violations

