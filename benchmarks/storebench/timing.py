"""Timing StateWise's store operations beside the raw SQLite statements, interleaved, with profiles.

Part of benchmarks/store_speed.py (split for size; the script documents the whole)."""

from __future__ import annotations

import cProfile
import functools
import io
import json
import math
import os
import pstats
import sqlite3
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store_anchor import (  # a sibling module of benchmarks/store_speed.py, which puts benchmarks/ on the path
    anchor_get,
    anchor_history_write,
    anchor_retrieve,
    check_same,
)

from statewise.records import (
    Authority,
    Evidence,
    SourceKind,
)
from statewise.scopes import TaskScope
from statewise.store.sql import LINK_COLUMNS, RECORD_COLUMNS
from statewise.values import ValueType
from storebench.dataset import make_value, random_task, spec_of
from storebench.langgraph import lg_namespace, lg_retrieve


class Timed(int):
    """A call's wall time in ns that also carries its CPU time in ns (``cpu``): this process's
    CPU time, which covers SQLite's work (it runs in-process) and, unlike the wall time, not
    the time other processes held the core, so it is the steadier figure on a loaded machine."""

    cpu: int

    def __new__(cls, wall: int, cpu: int) -> Timed:
        made = super().__new__(cls, wall)
        made.cpu = cpu
        return made


def stats(samples_ns: list[int]) -> dict[str, float]:
    ordered = sorted(samples_ns)
    n = len(ordered)

    def pct(p: float) -> float:
        return ordered[min(n - 1, max(0, math.ceil(p / 100 * n) - 1))] / 1e6

    out = {"p50_ms": statistics.median(ordered) / 1e6, "p95_ms": pct(95), "mean_ms": statistics.fmean(ordered) / 1e6,
           "n": n}
    if ordered and all(isinstance(sample, Timed) for sample in ordered):
        out["cpu_p50_ms"] = statistics.median(sample.cpu for sample in ordered) / 1e6  # type: ignore[attr-defined]
    return out


def raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def time_pair(lib: tuple[Any, ...], raw: tuple[Any, ...], raw_first: bool) -> tuple[int, int, Any, Any]:
    """Time ``lib[0](*lib[1:])`` and ``raw[0](*raw[1:])`` back to back, in the given order.

    Returns (statewise ns, raw ns, statewise result, raw result).
    """
    clock, cpu = time.perf_counter_ns, time.process_time_ns
    lib_fn, *lib_args = lib
    raw_fn, *raw_args = raw
    if raw_first:
        c0, t0 = cpu(), clock()
        raw_out = raw_fn(*raw_args)
        t1, c1 = clock(), cpu()
        lib_out = lib_fn(*lib_args)
        t2, c2 = clock(), cpu()
        return Timed(t2 - t1, c2 - c1), Timed(t1 - t0, c1 - c0), lib_out, raw_out
    c0, t0 = cpu(), clock()
    lib_out = lib_fn(*lib_args)
    t1, c1 = clock(), cpu()
    raw_out = raw_fn(*raw_args)
    t2, c2 = clock(), cpu()
    return Timed(t1 - t0, c1 - c0), Timed(t2 - t1, c2 - c1), lib_out, raw_out


def q(raw: Any, statement: str) -> str:
    """The statement in the driver's placeholder style (psycopg takes %s)."""
    return statement if isinstance(raw, sqlite3.Connection) else statement.replace("?", "%s")


def _raw_retrieve(raw: Any, scopes: tuple[str, ...]) -> list[Any]:
    return raw.execute(q(raw,
        f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = 'active' "
        f"AND scope IN ({', '.join('?' * len(scopes))})"), scopes,
    ).fetchall()


RAW_GET_ACTIVE = f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'"


def _raw_get_active(raw: Any, key: str, scope: str) -> Any:
    return raw.execute(q(raw, RAW_GET_ACTIVE), (key, scope)).fetchone()


def time_third(i: int, fn: Any, *args: Any) -> tuple[int, Any]:
    """Time a third store's call (LangGraph) in the same iteration; (ns, result)."""
    clock, cpu = time.perf_counter_ns, time.process_time_ns
    c0, t0 = cpu(), clock()
    out = fn(*args)
    t1, c1 = clock(), cpu()
    return Timed(t1 - t0, c1 - c0), out


def bench_retrieve(store, raw, rng, universe, iterations, warmup, lg=None, anchor=None) -> dict[str, Any]:
    lib_ns, raw_ns, raw_rows, lib_records, near, lg_ns, anchor_ns = [], [], [], [], [], [], []
    rows_ns = []
    for i in range(warmup + iterations):
        task = random_task(rng, universe)
        scopes = tuple(str(s) for s in task.applicable_scopes())  # given to the raw query, untimed
        # The same retrieval as plain rows (store.retrieve_rows: no model per row), in the same
        # iteration as the others, before them on odd iterations and after them on even ones.
        if i % 2 == 1:
            rows_t, light = time_third(i, store.retrieve_rows, task)
        if anchor is not None and i % 2 == 1:
            anchor_t, anchor_rows = time_third(i, anchor_retrieve, anchor, scopes)
        if lg is not None and i % 2 == 0:
            lg_t, items = time_third(i, lg_retrieve, lg, scopes)
        lib_t, raw_t, result, rows = time_pair((store.retrieve, task), (_raw_retrieve, raw, scopes), i % 2 == 1)
        if lg is not None and i % 2 == 1:
            lg_t, items = time_third(i, lg_retrieve, lg, scopes)
        if anchor is not None and i % 2 == 0:
            anchor_t, anchor_rows = time_third(i, anchor_retrieve, anchor, scopes)
        if i % 2 == 0:
            rows_t, light = time_third(i, store.retrieve_rows, task)
        if len(light.records) + len(light.stale) + len(light.shadowed) != len(rows):
            raise SystemExit(f"retrieve_rows and the raw query disagree for {task}")
        if i >= warmup:
            rows_ns.append(rows_t)
        if anchor is not None:
            check_same("retrieve", anchor_rows, len(rows))
            if i >= warmup:
                anchor_ns.append(anchor_t)
        if lg is not None:
            if len(items) != len(rows):
                raise SystemExit(f"LangGraph and the raw query disagree for {task}: {len(items)} vs {len(rows)}")
            if i >= warmup:
                lg_ns.append(lg_t)
        got = len(result.records) + len(result.stale) + len(result.shadowed)
        if got != len(rows):
            raise SystemExit(f"retrieve and the raw query disagree for {task}: {got} vs {len(rows)} rows")
        if i >= warmup:
            lib_ns.append(lib_t)
            raw_ns.append(raw_t)
            raw_rows.append(len(rows))
            lib_records.append(len(result.records))
            near.append(len(result.near_misses))
    return {"statewise": stats(lib_ns), "raw": stats(raw_ns), **({"langgraph": stats(lg_ns)} if lg_ns else {}),
            **({"anchor": stats(anchor_ns)} if anchor_ns else {}), "rows": stats(rows_ns),
            "rows_per_call": statistics.fmean(raw_rows), "records_in_force_per_call": statistics.fmean(lib_records),
            "near_misses_per_call": statistics.fmean(near)}


def rows_result(retrieve: dict[str, Any]) -> dict[str, Any]:
    """store.retrieve_rows's figures beside the raw, anchor and LangGraph samples of the same
    iterations (bench_retrieve timed all of them in one loop)."""
    return {"statewise": retrieve.pop("rows"),
            **{side: retrieve[side] for side in ("raw", "langgraph", "anchor") if side in retrieve}}


def bench_get_active(store, raw, rng, dataset, iterations, warmup, lg=None, anchor=None) -> dict[str, Any]:
    lib_ns, raw_ns, lg_ns, anchor_ns = [], [], [], []
    for i in range(warmup + iterations):
        rid, key, scope = rng.choice(dataset.active)
        if anchor is not None and i % 2 == 1:
            anchor_t, anchor_row = time_third(i, anchor_get, anchor, scope, key)
        if lg is not None and i % 2 == 0:
            lg_t, item = time_third(i, lg.get, lg_namespace(scope), key)
        lib_t, raw_t, found, row = time_pair((store.get_active, key, scope), (_raw_get_active, raw, key, scope),
                                             i % 2 == 1)
        if lg is not None and i % 2 == 1:
            lg_t, item = time_third(i, lg.get, lg_namespace(scope), key)
        if anchor is not None and i % 2 == 0:
            anchor_t, anchor_row = time_third(i, anchor_get, anchor, scope, key)
        if anchor is not None:
            check_same("get", anchor_row, 1)
            if i >= warmup:
                anchor_ns.append(anchor_t)
        if lg is not None:
            if item is None:
                raise SystemExit(f"LangGraph did not find ({key}, {scope})")
            if i >= warmup:
                lg_ns.append(lg_t)
        if found is None or row is None or found.id != rid or row[0] != rid:
            raise SystemExit(f"get_active did not find {rid} for ({key}, {scope})")
        if i >= warmup:
            lib_ns.append(lib_t)
            raw_ns.append(raw_t)
    return {"statewise": stats(lib_ns), "raw": stats(raw_ns), **({"langgraph": stats(lg_ns)} if lg_ns else {}),
            **({"anchor": stats(anchor_ns)} if anchor_ns else {})}


RAW_SELECT_OLD = "SELECT key, scope, value_type, ttl_seconds, version, status FROM sw_records WHERE id = ?"
RAW_MARK_OLD = ("UPDATE sw_records SET status = 'superseded', superseded_by = ?, status_reason = ?, "
                "status_changed_at = ?, version = version + 1 WHERE id = ? AND version = ? AND status = 'active'")
RAW_INSERT_RECORD = f"INSERT INTO sw_records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * 19)})"
RAW_INSERT_LINK = f"INSERT INTO sw_links ({LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _stamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def raw_supersede(raw: Any, record_id: str, expected_version: int, value_json: str,
                  evidence: dict[str, Any], observed: str) -> None:
    """The same writes as store.supersede (read the old row, mark it with a version check,
    insert the new row and the link, in one transaction), with nothing but the driver and json."""
    new_rid = "rec_" + os.urandom(13).hex().upper()
    now = _stamp(datetime.now(UTC))
    lite = isinstance(raw, sqlite3.Connection)
    raw.execute("BEGIN IMMEDIATE" if lite else "BEGIN")
    try:
        row = raw.execute(q(raw, RAW_SELECT_OLD + ("" if lite else " FOR UPDATE")), (record_id,)).fetchone()
        if row is None or row[4] != expected_version or row[5] != "active":
            raise RuntimeError(f"raw supersede: {record_id} is not active at version {expected_version}")
        key, scope, value_type, ttl = row[0], row[1], row[2], row[3]
        cur = raw.execute(q(raw, RAW_MARK_OLD), (new_rid, evidence["detail"], now, record_id, expected_version))
        if cur.rowcount != 1:
            raise RuntimeError("raw supersede: stale version")
        raw.execute(q(raw, RAW_INSERT_RECORD), (
            new_rid, key, scope, value_type, value_json, "active", observed, now, observed, ttl,
            evidence["source"], evidence["authority"], evidence["actor"], None, record_id, None, 1, None, None,
        ))
        raw.execute(q(raw, RAW_INSERT_LINK), (
            "lnk_" + os.urandom(13).hex().upper(), "supersede", record_id, new_rid, scope,
            json.dumps(evidence, separators=(",", ":"), sort_keys=True), "", evidence["actor"], now,
        ))
        raw.execute("COMMIT")
    except BaseException:
        raw.execute("ROLLBACK")
        raise


def bench_supersede(store, raw, rng, dataset, iterations, warmup, lg=None, anchor=None) -> dict[str, Any]:
    """Each iteration supersedes two different active records, one through each path (and
    overwrites the StateWise one's key in LangGraph, which keeps no history, and in the
    anchor, which copies the old value to its history table first)."""
    total = warmup + iterations
    picked = rng.sample(dataset.active, 2 * total)
    lib_ns, raw_ns, lg_ns, anchor_ns = [], [], [], []
    read = raw.cursor()
    for i in range(total):
        prepared = []
        for rid, key, scope in (picked[2 * i], picked[2 * i + 1]):
            value_type, value_json, version = read.execute(q(raw,
                "SELECT value_type, value_json, version FROM sw_records WHERE id = ?"), (rid,)).fetchone()
            spec = spec_of(key)
            current = json.loads(value_json) if isinstance(raw, sqlite3.Connection) else value_json  # jsonb: decoded
            value = make_value(rng, spec, key)
            while value == current:
                value = make_value(rng, spec, key) if spec.value_type is not ValueType.BOOL else not current
            observed = datetime.now(UTC)
            evidence = Evidence(key=key, value=value, value_type=value_type, scope=scope,
                                source=SourceKind.OBSERVATION, authority=Authority.MACHINE,
                                actor="verifier.bench", observed_at=observed, detail="observed a different value")
            prepared.append((rid, version, evidence))
        (lib_rid, lib_version, lib_evidence), (raw_rid, raw_version, raw_evidence) = prepared
        raw_args = (raw_rid, raw_version, json.dumps(raw_evidence.value, separators=(",", ":"), sort_keys=True),
                    raw_evidence.model_dump(mode="json"), _stamp(raw_evidence.observed_at))

        if lg is not None:
            lg_args = (lg_namespace(lib_evidence.scope), lib_evidence.key,
                       {"value": lib_evidence.value, "value_type": lib_evidence.value_type.value,
                        "observed_at": _stamp(lib_evidence.observed_at), "source": "observation",
                        "authority": "machine", "actor": lib_evidence.actor})
        anchor_args = (lib_evidence.scope, lib_evidence.key,
                       json.dumps(lib_evidence.value, separators=(",", ":"), sort_keys=True))
        if anchor is not None and i % 2 == 1:
            anchor_t, _ = time_third(i, anchor_history_write, anchor, *anchor_args)
        if lg is not None and i % 2 == 0:
            lg_t, _ = time_third(i, lg.put, *lg_args)
        lib_t, raw_t, _, _ = time_pair(
            (functools.partial(store.supersede, expected_version=lib_version), lib_rid, lib_evidence),
            (raw_supersede, raw, *raw_args), i % 2 == 1,
        )
        if lg is not None and i % 2 == 1:
            lg_t, _ = time_third(i, lg.put, *lg_args)
        if anchor is not None and i % 2 == 0:
            anchor_t, _ = time_third(i, anchor_history_write, anchor, *anchor_args)
        if i >= warmup:
            lib_ns.append(lib_t)
            raw_ns.append(raw_t)
            if lg is not None:
                lg_ns.append(lg_t)
            if anchor is not None:
                anchor_ns.append(anchor_t)
    return {"statewise": stats(lib_ns), "raw": stats(raw_ns), **({"langgraph": stats(lg_ns)} if lg_ns else {}),
            **({"anchor": stats(anchor_ns)} if anchor_ns else {})}


def profile_retrieve(store, rng, universe, calls: int) -> str:
    tasks = [random_task(rng, universe) for _ in range(calls)]
    profiler = cProfile.Profile()
    profiler.enable()
    for task in tasks:
        store.retrieve(task)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
    return out.getvalue()


def breakdown_retrieve(store, raw, rng, universe, calls: int) -> list[tuple[str, float]]:
    """Where store.retrieve's time goes: its parts timed one by one (p50 ms over ``calls`` tasks).

    It re-runs, outside the library, the statements ``SQLStore.retrieve`` issues (read from
    src/statewise/store/sql.py) and the library's own row mapping on the rows they return.
    """
    from statewise.records import Retrieval, utcnow

    tasks = [random_task(rng, universe) for _ in range(calls)]
    scopes = {id(t): [str(s) for s in t.applicable_scopes()] for t in tasks}
    conn = store._conn

    def main_sql(task: TaskScope, bound: bool) -> list[Any]:
        applicable = scopes[id(task)]
        marks = ", ".join("?" * len(applicable))
        if bound:  # as the library writes it: status as a bound parameter
            return conn.execute(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = ? AND scope IN ({marks})",
                                ("active", *applicable)).fetchall()
        return conn.execute(f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = 'active' AND scope IN ({marks})",
                            applicable).fetchall()

    def near_sql(task: TaskScope) -> list[Any]:
        rows: list[Any] = []
        for prefix in (f"repo:{task.repo}@", "workspace:" + task.workspace.rstrip("/") + "/"):
            rows += conn.execute(
                f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE status = ? AND scope >= ? AND scope < ? "
                "ORDER BY seq LIMIT ?", ("active", prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1), 80),
            ).fetchall()
        return rows

    main_rows = {id(t): main_sql(t, False) for t in tasks}
    near_rows = {id(t): near_sql(t) for t in tasks}
    modelled = {id(t): [store._record_from_row(r) for r in main_rows[id(t)]] for t in tasks}
    now = utcnow()

    def order(task: TaskScope) -> None:
        rank = {scope: i for i, scope in enumerate(scopes[id(task)])}
        seen: set[str] = set()
        for record in sorted(modelled[id(task)], key=lambda r: (r.key, rank[r.scope])):
            if record.key not in seen:
                seen.add(record.key)
                record.is_stale(now)

    parts = [
        ("store.retrieve, whole call", lambda t: store.retrieve(t)),
        ("main SELECT, status as a bound parameter (as the library)", lambda t: main_sql(t, True)),
        ("main SELECT, status as a literal (the raw query)", lambda t: main_sql(t, False)),
        ("modelling the main rows (_record_from_row)", lambda t: [store._record_from_row(r) for r in main_rows[id(t)]]),
        ("near-miss SELECTs (2 prefix queries)", near_sql),
        ("modelling the near-miss rows", lambda t: [store._record_from_row(r) for r in near_rows[id(t)]]),
        ("sort by specificity, shadowing, staleness", order),
        ("Retrieval(...), validating the record lists again", lambda t: Retrieval(
            task="x", records=modelled[id(t)], stale=[], shadowed=[], near_misses=[])),
        ("Retrieval.model_construct(...), not validating", lambda t: Retrieval.model_construct(
            task="x", records=modelled[id(t)], stale=[], shadowed=[], near_misses=[])),
    ]
    results = []
    for label, part in parts:
        for task in tasks[: max(1, calls // 10)]:
            part(task)
        samples = []
        for task in tasks:
            start = time.perf_counter_ns()
            part(task)
            samples.append(time.perf_counter_ns() - start)
        results.append((label, statistics.median(samples) / 1e6))
    rows = statistics.fmean(len(v) for v in main_rows.values())
    near = statistics.fmean(len(v) for v in near_rows.values())
    results.append((f"(rows per call: main {rows:.1f}, near-miss {near:.1f})", float("nan")))
    return results


def breakdown_get_active(store, rng, dataset, calls: int) -> list[tuple[str, float]]:
    """Where store.get_active's time goes, part by part (p50 ms over ``calls`` lookups)."""
    from statewise.scopes import Scope

    picks = [rng.choice(dataset.active) for _ in range(calls)]
    conn = store._conn
    bound_sql = f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = ?"
    literal_sql = f"SELECT {RECORD_COLUMNS} FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'"
    rows = {rid: conn.execute(literal_sql, (key, scope)).fetchone() for rid, key, scope in picks}

    def begin_commit(_: Any) -> None:
        conn.execute("BEGIN")
        conn.execute("COMMIT")

    parts = [
        ("store.get_active, whole call", lambda p: store.get_active(p[1], p[2])),
        ("SELECT, status as a bound parameter (as the library)",
         lambda p: conn.execute(bound_sql, (p[1], p[2], "active")).fetchone()),
        ("SELECT, status as a literal (the raw query)", lambda p: conn.execute(literal_sql, (p[1], p[2])).fetchone()),
        ("Scope.parse of the scope argument", lambda p: str(Scope.parse(p[2]))),
        ("BEGIN + COMMIT of the read transaction", begin_commit),
        ("modelling the row (_record_from_row)", lambda p: store._record_from_row(rows[p[0]])),
    ]
    results = []
    for label, part in parts:
        for pick in picks[: max(1, calls // 10)]:
            part(pick)
        samples = []
        for pick in picks:
            start = time.perf_counter_ns()
            part(pick)
            samples.append(time.perf_counter_ns() - start)
        results.append((label, statistics.median(samples) / 1e6))
    return results


def query_plans(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The plans SQLite picks for the library's statements and for the raw ones."""
    scope_in = ", ".join("?" * 9)
    probes = [
        ("statewise retrieve", f"SELECT id FROM sw_records WHERE status = ? AND scope IN ({scope_in})",
         ("active",) + ("global",) * 9),
        ("raw retrieve", f"SELECT id FROM sw_records WHERE status = 'active' AND scope IN ({scope_in})",
         ("global",) * 9),
        ("statewise near-miss", ("SELECT seq FROM sw_records WHERE status = 'active' AND scope >= ? AND scope < ? "
                                 "AND scope NOT IN (?) ORDER BY scope, key LIMIT ?"),
         ("repo:a@", "repo:a@~", "repo:a@main", 20)),
        ("statewise get_active", "SELECT id FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'",
         ("k.k", "global")),
        ("raw get_active", "SELECT id FROM sw_records WHERE key = ? AND scope = ? AND status = 'active'",
         ("k.k", "global")),
    ]
    plans = []
    for label, sql, params in probes:
        detail = "; ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        plans.append((label, detail))
    return plans


# --- the run -----------------------------------------------------------------------------





