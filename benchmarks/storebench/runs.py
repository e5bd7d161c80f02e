"""One run per store size (and PostgreSQL), the tables and the goals summary.

Part of benchmarks/store_speed.py (split for size; the script documents the whole)."""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from store_anchor import (  # a sibling module of benchmarks/store_speed.py, which puts benchmarks/ on the path
    active_triples,
    build_anchor,
    raw_import,
)

from statewise.store.sqlite import SQLiteStore
from storebench.dataset import (
    ANCHOR_GOALS,
    IMPORT_GOAL_SECONDS,
    LANGGRAPH_RETRIEVE_GOAL,
    PG_GOALS,
    RATIO_GOAL,
    RAW_IMPORT_GOAL,
    RETRIEVE_GOAL_AT,
    RETRIEVE_GOAL_MS,
    USERS,
    Dataset,
    Universe,
    build_universe,
    generate,
    load,
)
from storebench.imports import audit_lost_updates, bench_concurrent_hooks, bench_hook, bench_import, write_jsonl
from storebench.langgraph import load_langgraph, open_langgraph
from storebench.timing import (
    bench_get_active,
    bench_retrieve,
    bench_supersede,
    breakdown_get_active,
    breakdown_retrieve,
    profile_retrieve,
    query_plans,
    raw_connection,
    rows_result,
)


def run_postgres(args: argparse.Namespace, jsonl: Path, n_lines: int, dataset: Dataset, rng: random.Random,
                 universe: Universe, tmp: Path) -> dict[str, Any]:
    """The PostgreSQL backend beside raw psycopg doing the same SQL, on the same data, then
    many hook processes at once on that store."""
    import psycopg

    from statewise.store.postgres import PostgresStore, split_schema

    schema = f"sw_bench_{os.getpid()}"
    dsn = args.postgres + ("&" if "?" in args.postgres else "?") + f"schema={schema}"
    store = PostgresStore(dsn)
    out: dict[str, Any] = {"records": len(dataset.active), "schema": schema}
    try:
        started = time.perf_counter()
        with open(jsonl, encoding="utf-8") as handle:
            store.import_jsonl(handle, source=str(jsonl))
        out["import_seconds"] = time.perf_counter() - started
        out["import_lines"] = n_lines
        print(f"\n-- PostgreSQL: Store.import_jsonl of {n_lines:,} lines in {out['import_seconds']:.1f} s "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        raw = psycopg.connect(split_schema(dsn)[0], autocommit=True)
        raw.execute(f'SET search_path TO "{schema}"')
        raw.execute("ANALYZE sw_records")
        results = {
            "retrieve": bench_retrieve(store, raw, rng, universe, args.iterations, args.warmup),
            "get_active": bench_get_active(store, raw, rng, dataset, args.iterations, args.warmup),
            "supersede": bench_supersede(store, raw, rng, dataset, args.supersede_iterations or args.iterations,
                                         args.warmup),
        }
        results["retrieve_rows"] = rows_result(results["retrieve"])
        for result in results.values():
            result["ratio_p50"] = result["statewise"]["p50_ms"] / result["raw"]["p50_ms"]
        out["results"] = results
        print(f"PostgreSQL results ({len(dataset.active):,} active records; ms; ratio = statewise p50 / raw psycopg "
              f"p50; load average {os.getloadavg()[0]:.1f})")
        for op, result in results.items():
            goal = PG_GOALS.get(op)
            verdict = "" if goal is None else f"  ratio<={goal:g}x {'met' if result['ratio_p50'] <= goal else 'MISSED'}"
            print(f"  {op:11} statewise p50 {result['statewise']['p50_ms']:8.3f}  psycopg p50 "
                  f"{result['raw']['p50_ms']:8.3f}  {result['ratio_p50']:5.2f}x{verdict}")
        if args.concurrent_hooks:
            before = raw.execute("SELECT COUNT(*) FROM sw_records").fetchone()[0]
            hooks = bench_concurrent_hooks(dsn, args.concurrent_hooks, args.hook_rounds, tmp / "pg-hooks")
            rows = raw.execute("SELECT id, status, version FROM sw_records").fetchall()
            verify = dict(raw.execute("SELECT from_record, COUNT(*) FROM sw_links WHERE kind = 'verify' "
                                      "GROUP BY from_record").fetchall())
            hooks["records_written"] = len(rows) - before
            hooks["lost_updates"] = audit_lost_updates(rows, verify)
            hooks["duplicate_active"] = raw.execute(
                "SELECT COUNT(*) FROM (SELECT key, scope FROM sw_records WHERE status = 'active' "
                "GROUP BY key, scope HAVING COUNT(*) > 1) AS d").fetchone()[0]
            out["concurrent_hooks"] = hooks
            print(f"{hooks['processes']} concurrent hook processes x {hooks['rounds']} rounds, guarded "
                  f"`git push origin feature` on this PostgreSQL store: p50 {hooks['p50_ms']:.0f} ms, p95 "
                  f"{hooks['p95_ms']:.0f} ms; {hooks['failures']} failed; {hooks['records_written']} records written; "
                  f"lost updates {hooks['lost_updates']}; (key, scope) with two active {hooks['duplicate_active']} "
                  f"(load average {hooks['loadavg'][0]:.1f} -> {hooks['loadavg'][1]:.1f})")
            print("  decisions: " + "; ".join(f"{n} x {d[:140]}" for d, n in hooks["decisions"].items()))
        raw.close()
    finally:
        store.drop()
        store.close()
    return out


def run_size(n_records: int, args: argparse.Namespace) -> dict[str, Any]:
    universe = build_universe(random.Random(args.seed))  # the same users, repositories and branches at every size
    rng = random.Random(args.seed + n_records)
    with tempfile.TemporaryDirectory(prefix="statewise-bench-", dir=args.tmpdir) as tmp:
        path = Path(tmp) / "store.db"
        print(f"\n== {n_records:,} records ({len(universe.scopes):,} scopes with records possible, "
              f"{len(universe.repos):,} repositories, {sum(len(r.branches) for r in universe.repos):,} branches, "
              f"{len(universe.checkouts):,} checkouts, {len(USERS)} users) ==", flush=True)
        store = SQLiteStore(path)  # migrations create the schema
        t0 = time.perf_counter()
        dataset = generate(rng, universe, n_records, store)
        t1 = time.perf_counter()
        load(store, dataset)
        t2 = time.perf_counter()
        store.close()
        db_bytes = path.stat().st_size
        n_links = len(dataset.links)
        distinct_keys = len({key for _, key, _ in dataset.active})
        distinct_scopes = len({scope for _, _, scope in dataset.active})
        print(f"generated {n_records:,} validated records and {len(dataset.links):,} links in {t1 - t0:.1f} s; "
              f"bulk load (executemany, one transaction, indexes, checkpoint) {t2 - t1:.1f} s; "
              f"database file {db_bytes / 2**20:.1f} MiB", flush=True)
        print("statuses: " + ", ".join(f"{k} {v:,}" for k, v in dataset.counts.items())
              + f"; active records cover {distinct_scopes:,} scopes and {distinct_keys:,} distinct keys", flush=True)

        extra: dict[str, Any] = {}
        anchor, extra["anchor_load_seconds"] = build_anchor(Path(tmp) / "anchor.db", active_triples(dataset.rows))
        print(f"anchor (3-column raw schema, benchmarks/store_anchor.py): {len(dataset.active):,} active rows "
              f"loaded in {extra['anchor_load_seconds']:.1f} s", flush=True)
        lg = None
        if args.langgraph:
            lg = open_langgraph(Path(tmp) / "langgraph.db")
            extra["langgraph_load_seconds"] = load_langgraph(lg, [row for row in dataset.rows if row[5] == "active"])
            print(f"LangGraph SqliteStore: put {len(dataset.active):,} active records (it keeps no history) in "
                  f"{extra['langgraph_load_seconds']:.1f} s (batches of 1,000 PutOps)", flush=True)
        n_lines = len(dataset.rows) + len(dataset.links)
        jsonl = Path(tmp) / "export.jsonl"
        pg_here = bool(args.postgres) and n_records == (args.postgres_records or min(args.records))
        if args.imports or pg_here:
            write_jsonl(jsonl, dataset)
        if args.imports:
            extra["import"] = imp = bench_import(Path(tmp), jsonl, n_lines, api=args.api_import)
            print(f"public import of {n_lines:,} lines ({imp['jsonl_mib']:.0f} MiB JSONL, contract key schema): "
                  f"`statewise record import` {imp['cli_seconds']:.1f} s wall, {imp['cli_cpu_seconds']:.1f} s CPU, "
                  f"peak RSS {imp['cli_peak_rss_mib']:.0f} MiB"
                  + (f"; Store.import_jsonl {imp['api_seconds']:.1f} s wall, {imp['api_cpu_seconds']:.1f} s CPU"
                     if "api_seconds" in imp else "")
                  + f" (load average {imp['loadavg'][0]:.1f} -> {imp['loadavg'][1]:.1f})", flush=True)
            if args.api_import:
                load_before = os.getloadavg()[0]
                imp.update(raw_import(Path(tmp), jsonl, n_lines))
                print(f"raw import of the same file (json.loads + executemany, one transaction, benchmarks/"
                      f"store_anchor.py) {imp['raw_seconds']:.1f} s wall, {imp['raw_cpu_seconds']:.1f} s CPU; "
                      f"Store.import_jsonl / raw: {imp['api_seconds'] / imp['raw_seconds']:.2f}x wall, "
                      f"{imp['api_cpu_seconds'] / imp['raw_cpu_seconds']:.2f}x CPU (load average {load_before:.1f} "
                      f"-> {os.getloadavg()[0]:.1f})", flush=True)

        # Only the active (id, key, scope) list is needed from here on. Freeze what is left of
        # the generator's objects so that the collector does not walk this benchmark's own
        # million-row heap during the timed calls (an agent process would not hold it).
        dataset.rows.clear()
        dataset.links.clear()
        gc.collect()
        gc.freeze()
        # Every side reads its own file warm: the paired StateWise and raw calls share one file,
        # so whichever runs first warms the other's pages, while the anchor and LangGraph read
        # theirs alone; after a run has written gigabytes (imports), some files may have left
        # the OS page cache. How long the read took says whether they had.
        warm = [path, Path(tmp) / "anchor.db"] + ([Path(tmp) / "langgraph.db"] if lg is not None else [])
        extra["page_cache_warm_seconds"] = warm_seconds = warm_files(warm)
        print(f"read {len(warm)} database files through the OS page cache before timing in {warm_seconds:.1f} s",
              flush=True)
        store = SQLiteStore(path)
        raw = raw_connection(path)
        try:
            plans = query_plans(raw)
            results: dict[str, Any] = {}
            gc.collect()
            results["retrieve"] = bench_retrieve(store, raw, rng, universe, args.iterations, args.warmup, lg,
                                                 anchor)
            print(f"  retrieve done ({results['retrieve']['rows_per_call']:.0f} rows per call)", flush=True)
            results["retrieve_rows"] = rows_result(results["retrieve"])
            gc.collect()
            results["get_active"] = bench_get_active(store, raw, rng, dataset, args.iterations, args.warmup, lg,
                                                     anchor)
            print("  get_active done", flush=True)
            gc.collect()
            results["supersede"] = bench_supersede(store, raw, rng, dataset,
                                                   args.supersede_iterations or args.iterations, args.warmup, lg,
                                                   anchor)
            print("  supersede done", flush=True)
            profile = profile_retrieve(store, rng, universe, args.profile) if args.profile else None
            breakdown = breakdown_retrieve(store, raw, rng, universe, args.breakdown) if args.breakdown else None
            breakdown_ga = breakdown_get_active(store, rng, dataset, args.breakdown) if args.breakdown else None
        finally:
            store.close()
            raw.close()
            anchor.close()
            if lg is not None:
                lg.conn.close()
            gc.unfreeze()
        if args.hook_calls:
            extra["hook"] = hook = bench_hook(str(path), args.hook_calls, Path(tmp) / "hook")
            print(f"hook, guarded `git push origin feature` (claude-code pre) on this {n_records:,}-record store: "
                  f"p50 {hook['p50_ms']:.0f} ms, p95 {hook['p95_ms']:.0f} ms over {hook['n']} calls "
                  f"(load average {hook['loadavg'][0]:.1f} -> {hook['loadavg'][1]:.1f}); "
                  f"decision {hook['decision'][:80]}",
                  flush=True)
        if pg_here:
            extra["postgres"] = run_postgres(args, jsonl, n_lines, dataset, rng, universe, Path(tmp))

    for result in results.values():
        result["ratio_p50"] = result["statewise"]["p50_ms"] / result["raw"]["p50_ms"]
        result["ratio_ok"] = result["ratio_p50"] <= RATIO_GOAL
    retrieve_p50 = results["retrieve"]["statewise"]["p50_ms"]
    results["retrieve"]["p50_goal_ok"] = retrieve_p50 < RETRIEVE_GOAL_MS if n_records >= RETRIEVE_GOAL_AT else None

    for result in results.values():
        if "langgraph" in result:
            result["ratio_langgraph"] = result["statewise"]["p50_ms"] / result["langgraph"]["p50_ms"]
        if "anchor" in result:
            result["ratio_anchor"] = result["statewise"]["p50_ms"] / result["anchor"]["p50_ms"]
        for side in ("raw", "anchor", "langgraph"):
            if side in result and result[side].get("cpu_p50_ms") and "cpu_p50_ms" in result["statewise"]:
                result[f"cpu_ratio_{side}"] = result["statewise"]["cpu_p50_ms"] / result[side]["cpu_p50_ms"]
    print_table(n_records, results)
    print("query plans (EXPLAIN QUERY PLAN):")
    for label, detail in plans:
        print(f"  {label:22} {detail}")
    if breakdown:
        print(f"where store.retrieve's time goes (p50 ms of each part alone, over {args.breakdown} tasks):")
        for label, value in breakdown:
            print(f"  {label}" if math.isnan(value) else f"  {label:58} {value:8.3f}")
        print(f"where store.get_active's time goes (p50 ms of each part alone, over {args.breakdown} lookups):")
        for label, value in breakdown_ga:
            print(f"  {label:58} {value:8.3f}")
    if profile:
        print(f"cProfile of {args.profile} store.retrieve calls, by own time:\n{profile}")
    return {
        "records": n_records, "links": n_links, "statuses": dataset.counts,
        "generate_seconds": round(t1 - t0, 2), "load_seconds": round(t2 - t1, 2), "db_bytes": db_bytes,
        "active_scopes": distinct_scopes, "active_distinct_keys": distinct_keys,
        "query_plans": dict(plans), "results": results,
        "retrieve_breakdown_p50_ms": {label: value for label, value in breakdown or () if not math.isnan(value)},
        "get_active_breakdown_p50_ms": dict(breakdown_ga or ()),
        **extra,
    }


def warm_files(paths: list[Path]) -> float:
    """Read each file (and its WAL) once from start to end; the seconds it took."""
    started = time.perf_counter()
    for path in paths:
        for name in (path, Path(str(path) + "-wal")):
            if name.exists():
                with open(name, "rb") as handle:
                    while handle.read(1 << 22):
                        pass
    return time.perf_counter() - started


def print_table(n_records: int, results: dict[str, Any]) -> None:
    header = (f"{'operation':11} {'statewise p50':>14} {'raw p50':>10} {'ratio':>7} {'statewise p95':>14} "
              f"{'raw p95':>10} {'statewise mean':>15} {'raw mean':>10}  goals")
    print(f"\nresults at {n_records:,} records (milliseconds; ratio = statewise p50 / raw p50)")
    print(header)
    print("-" * len(header))
    for op, result in results.items():
        lib, raw = result["statewise"], result["raw"]
        goals = [f"ratio<={RATIO_GOAL:g}x {'met' if result['ratio_ok'] else 'MISSED'}"]
        if op == "retrieve":
            verdict = result["p50_goal_ok"]
            if verdict is None:
                goals.append(f"p50<{RETRIEVE_GOAL_MS:g}ms applies at {RETRIEVE_GOAL_AT:,} only "
                             f"({'under' if lib['p50_ms'] < RETRIEVE_GOAL_MS else 'over'})")
            else:
                goals.append(f"p50<{RETRIEVE_GOAL_MS:g}ms {'met' if verdict else 'MISSED'}")
        if "langgraph" in result:
            goals.append(f"LangGraph p50 {result['langgraph']['p50_ms']:.3f} ms, statewise/LangGraph "
                         f"{result['ratio_langgraph']:.2f}x")
        if "anchor" in result:
            goals.append(f"anchor p50 {result['anchor']['p50_ms']:.3f} ms, statewise/anchor "
                         f"{result['ratio_anchor']:.2f}x")
        if "cpu_p50_ms" in lib:
            goals.append("CPU p50 ms: " + ", ".join(
                f"{side} {result[side]['cpu_p50_ms']:.3f}" for side in ("statewise", "raw", "anchor", "langgraph")
                if side in result) + "; statewise/" + ", ".join(
                f"{side} {result[f'cpu_ratio_{side}']:.2f}x" for side in ("raw", "anchor", "langgraph")
                if f"cpu_ratio_{side}" in result))
        print(f"{op:11} {lib['p50_ms']:14.3f} {raw['p50_ms']:10.3f} {result['ratio_p50']:6.2f}x "
              f"{lib['p95_ms']:14.3f} {raw['p95_ms']:10.3f} {lib['mean_ms']:15.3f} {raw['mean_ms']:10.3f}  "
              + "; ".join(goals))
    print(f"({results['retrieve']['statewise']['n']:,} timed iterations each after warm-up; retrieve returned "
          f"{results['retrieve']['rows_per_call']:.1f} rows per call on average, "
          f"{results['retrieve']['records_in_force_per_call']:.1f} of them in force, plus "
          f"{results['retrieve']['near_misses_per_call']:.1f} near misses)")


def print_goals(runs: list[dict[str, Any]]) -> None:
    """Issue 15's goals, each met or not, from this run's figures."""
    print("\n== goals (issue 15) ==")
    for run in runs:
        n, res = run["records"], run["results"]
        line = f"{n:>9,} records:"
        imp = run.get("import")
        if imp:
            line += (f" import {imp['cli_seconds']:.1f} s CLI ({imp['cli_cpu_seconds']:.1f} s CPU)"
                     + (f" / {imp['api_seconds']:.1f} s API ({imp['api_cpu_seconds']:.1f} s CPU)" if "api_seconds"
                        in imp else "") + f", peak RSS {imp['cli_peak_rss_mib']:.0f} MiB"
                     + f", load {imp['loadavg'][0]:.1f}"
                     + (f" (goal <= {IMPORT_GOAL_SECONDS:g} s at 1M: "
                        f"{'met' if imp['cli_seconds'] <= IMPORT_GOAL_SECONDS else 'MISSED'})"
                        if n >= 1_000_000 else "")
                     + f", raw executemany load of the same rows {run['load_seconds']:.1f} s;")
        sup = res["supersede"]["ratio_p50"]
        line += f" supersede {sup:.2f}x raw ({'met' if sup <= RATIO_GOAL else 'MISSED'});"
        ret = res["retrieve"]
        line += f" retrieve {ret['ratio_p50']:.2f}x raw ({'met' if ret['ratio_p50'] <= RATIO_GOAL else 'MISSED'})"
        if "ratio_langgraph" in ret:
            lg_ok = ret["ratio_langgraph"] <= LANGGRAPH_RETRIEVE_GOAL
            line += f", {ret['ratio_langgraph']:.2f}x LangGraph ({'met' if lg_ok else 'MISSED'})"
        line += f" with {ret['near_misses_per_call']:.1f} near misses per call"
        if "hook" in run:
            line += f"; hook p50 {run['hook']['p50_ms']:.0f} ms"
        print(line)
        pg = run.get("postgres")
        if pg:
            parts = [f"{op} {r['ratio_p50']:.2f}x psycopg"
                     + (f" ({'met' if r['ratio_p50'] <= PG_GOALS[op] else 'MISSED'})" if op in PG_GOALS else "")
                     for op, r in pg["results"].items()]
            print(f"{'':>9}   PostgreSQL: " + ", ".join(parts)
                  + f"; Store.import_jsonl (COPY) of {pg['import_lines']:,} lines {pg['import_seconds']:.1f} s")
            hooks = pg.get("concurrent_hooks")
            if hooks:
                print(f"{'':>9}   {hooks['processes']} concurrent hooks: p50 {hooks['p50_ms']:.0f} ms, p95 "
                      f"{hooks['p95_ms']:.0f} ms, {hooks['failures']} failed, {hooks['lost_updates']} lost updates")
    print("\n== goals (issue 27: against the anchor's 3-column raw query, benchmarks/store_anchor.py) ==")
    for run in runs:
        n, res = run["records"], run["results"]
        parts = []
        for op, goal in ANCHOR_GOALS.items():
            if "ratio_anchor" in res[op]:
                ratio = res[op]["ratio_anchor"]
                cpu = res[op].get("cpu_ratio_anchor")
                parts.append(f"{op} {ratio:.2f}x anchor (goal <= {goal:g}x: {'met' if ratio <= goal else 'MISSED'}"
                             + (f"; in CPU time {cpu:.2f}x: {'met' if cpu <= goal else 'MISSED'})" if cpu else ")"))
        ret = res["retrieve"]
        if "ratio_langgraph" in ret:
            ok = ret["ratio_langgraph"] <= LANGGRAPH_RETRIEVE_GOAL
            cpu = ret.get("cpu_ratio_langgraph")
            parts.append(f"retrieve {ret['ratio_langgraph']:.2f}x LangGraph (goal <= {LANGGRAPH_RETRIEVE_GOAL:g}x: "
                         f"{'met' if ok else 'MISSED'}"
                         + (f"; in CPU time {cpu:.2f}x: {'met' if cpu <= LANGGRAPH_RETRIEVE_GOAL else 'MISSED'})"
                            if cpu else ")"))
        light = res.get("retrieve_rows", {})
        if "ratio_anchor" in light:
            parts.append(f"retrieve_rows {light['ratio_anchor']:.2f}x anchor (goal <= {ANCHOR_GOALS['retrieve']:g}x: "
                         f"{'met' if light['ratio_anchor'] <= ANCHOR_GOALS['retrieve'] else 'MISSED'})")
        if "ratio_langgraph" in light:
            parts.append(f"retrieve_rows {light['ratio_langgraph']:.2f}x LangGraph (goal <= "
                         f"{LANGGRAPH_RETRIEVE_GOAL:g}x: "
                         f"{'met' if light['ratio_langgraph'] <= LANGGRAPH_RETRIEVE_GOAL else 'MISSED'})")
        imp = run.get("import") or {}
        if "raw_seconds" in imp:
            ratio = imp["api_seconds"] / imp["raw_seconds"]
            parts.append(f"Store.import_jsonl {ratio:.2f}x the raw import's wall ({imp['api_seconds']:.1f} vs "
                         f"{imp['raw_seconds']:.1f} s; CPU {imp['api_cpu_seconds']:.1f} vs "
                         f"{imp['raw_cpu_seconds']:.1f} s; goal <= {RAW_IMPORT_GOAL:g}x: "
                         f"{'met' if ratio <= RAW_IMPORT_GOAL else 'MISSED'})")
        print(f"{n:>9,} records: " + "; ".join(parts) + ("" if n >= 1_000_000 else " (the goals are set at 1M)"))
    hooks = [(run["records"], run["hook"]["p50_ms"]) for run in runs if "hook" in run]
    if len(hooks) >= 2:
        (small, first), (large, last) = hooks[0], hooks[-1]
        print(f"hook p50 {first:.0f} ms at {small:,} records -> {last:.0f} ms at {large:,} ({last / first:.2f}x; "
              "flat means it does not grow with the store)")


def source_state() -> str:
    """The git commit of the StateWise being measured, and whether its store code differs from it."""

    import statewise

    root = Path(statewise.__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=10, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=root / "store",
                               capture_output=True, text=True, timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return f"{root} (git unavailable)"
    if not commit:
        return f"{root} (not a git checkout)"
    return f"{root} at commit {commit}, store code {'MODIFIED since that commit' if dirty else 'as committed'}"


