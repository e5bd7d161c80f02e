"""Markdown tables for docs/results.md from the JSON that ``statewise bench --output`` writes.

    statewise bench --all --output /tmp/all.json
    python benchmarks/results_tables.py /tmp/all.json > /tmp/tables.md

Every number it prints is read from the file: the per-set metrics of every method, the paired
case counts of each variant against ``statewise`` (the exact McNemar test the run computed,
Holm-corrected), the four-task sequences, and the hook method's latency over all its calls.
Nothing is computed that the run did not record; the script only arranges it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: Method order in the tables: the unguarded agent, ours, then the variants and the rest.
ORDER = ("agent", "statewise", "paper", "statewise_basis", "statewise_core", "hook")
CONDITIONS = ("correct", "corrupted", "removed")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(low_high: Sequence[float] | None) -> str:
    if not low_high:
        return ""
    return f" ({100 * low_high[0]:.0f}–{100 * low_high[1]:.0f})"


def _method_key(name: str) -> tuple[int, str]:
    return (ORDER.index(name) if name in ORDER else len(ORDER), name)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def group_rows(groups: list[dict[str, Any]], set_name: str, methods: Sequence[str] | None = None) -> str:
    """One set's metrics, every method (or ``methods``) and condition."""
    chosen = [g for g in groups if g["set"] == set_name and (methods is None or g["method"] in methods)]
    chosen.sort(key=lambda g: (_method_key(g["method"]), CONDITIONS.index(g["condition"])
                               if g["condition"] in CONDITIONS else 9))
    header = ["method", "condition", "n", "OC % (95% CI)", "AC %", "CS %", "UAR %", "AF1", "MC", "IC", "VC",
              "hook ms p50 / p95"]
    rows = []
    for g in chosen:
        hook = "–" if not g.get("hook_calls") else f"{g['hook_ms']:.0f} / {g['hook_ms_p95']:.0f}"
        rows.append([g["method"], g["condition"], str(g["n"]), _pct(g["OC"]) + _ci(g.get("OC_ci")),
                     _pct(g["AC"]), _pct(g["CS"]), _pct(g["UAR"]), _num(g["AF1"]), _num(g["MC"], 1),
                     _num(g["IC"]), _num(g["VC"], 1), hook])
    return _table(header, rows)


def summary(groups: list[dict[str, Any]], sets: Sequence[str], methods: Sequence[str]) -> str:
    """One row per set and method: OC under each condition, and UAR under corrupted memory."""
    rows = []
    for set_name in sets:
        for method in methods:
            by_condition = {g["condition"]: g for g in groups if g["set"] == set_name and g["method"] == method}
            if not by_condition:
                continue
            cells = [_pct(by_condition[c]["OC"]) if c in by_condition else "–" for c in CONDITIONS]
            corrupted = by_condition.get("corrupted")
            rows.append([set_name, method, *cells, _pct(corrupted["UAR"]) if corrupted else "–"])
    return _table(["set", "method", "OC % correct", "OC % corrupted", "OC % removed", "UAR % corrupted"], rows)


def comparison(significance: list[dict[str, Any]], methods: Sequence[str]) -> str:
    """Per set and condition: the cases only ``statewise`` gets right, those only the variant
    does, the OC difference and the Holm-corrected p of the run's exact McNemar test."""
    rows = []
    chosen = [s for s in significance if s["method"] in methods and s["reference"] == "statewise"]
    chosen.sort(key=lambda s: (s["set"], _method_key(s["method"]), CONDITIONS.index(s["condition"])
                               if s["condition"] in CONDITIONS else 9))
    for s in chosen:
        rows.append([s["set"], s["method"], s["condition"], str(s["pairs"]), str(s["reference_only"]),
                     str(s["method_only"]), f"{100 * s['delta_OC']:+.1f}", f"{s['p_holm']:.3g}"])
    return _table(["set", "method", "condition", "pairs", "statewise only", "method only", "ΔOC pp",
                   "p (Holm)"], rows)


def sequences(rows_in: list[dict[str, Any]]) -> str:
    """The four-task sequences: first task, later tasks, AFS and R per method and condition."""
    chosen = sorted(rows_in, key=lambda r: (r["set"], _method_key(r["method"]),
                                            CONDITIONS.index(r["condition"]) if r["condition"] in CONDITIONS else 9))
    rows = [[r["set"], r["method"], r["condition"], str(r["sequences"]), _pct(r["T1"]), _pct(r["T2+"]),
             _pct(r["AFS"]), _pct(r["R"]), _num(r["IC"])] for r in chosen]
    return _table(["set", "method", "condition", "sequences", "T1 %", "T2+ %", "AFS %", "R %", "IC"], rows)


def transfer(rows_in: list[dict[str, Any]]) -> str:
    """RQ6: OC and UAR on the configurations seen in development against unseen ones."""
    chosen = sorted(rows_in, key=lambda r: (_method_key(r["method"]), r["condition"], r["group"]))
    rows = [[r["method"], r["condition"], r["label"], str(r["n"]), _pct(r["OC"]) + _ci(r.get("OC_ci")),
             _pct(r["UAR"])] for r in chosen]
    return _table(["method", "condition", "configurations", "n", "OC % (95% CI)", "UAR %"], rows)


def hook_latency(episodes: list[dict[str, Any]]) -> str:
    """The hook method's PreToolUse latency over every call of the run."""
    # Episodes record each call's latency in seconds.
    calls = [1000 * float(seconds) for e in episodes if e["method"] == "hook"
             for seconds in e.get("hook_latencies") or []]
    if not calls:
        return "no hook calls in this run"
    calls.sort()
    p95 = calls[min(len(calls) - 1, int(0.95 * len(calls)))]
    return (f"{len(calls)} calls: mean {statistics.fmean(calls):.0f} ms, median {statistics.median(calls):.0f} ms, "
            f"95th percentile {p95:.0f} ms, maximum {calls[-1]:.0f} ms")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the JSON file of a statewise bench run")
    parser.add_argument("--sets", help="comma-separated sets (default: every set of the run)")
    args = parser.parse_args(argv)
    data = json.loads(args.results.read_text(encoding="utf-8"))
    metrics = data["metrics"]
    sets = args.sets.split(",") if args.sets else list(data["sets"])
    out = [f"Run: planner {data['planner']}, seed {data['seed']}, {len(data['episodes'])} episodes, "
           f"{data['wall_seconds']:.0f} s of wall time, jobs {data['jobs']}, started {data['started']}.", ""]
    unjudged = sum(1 for e in data["episodes"] if not e["judged"])
    errors = sum(1 for e in data["episodes"] if e.get("error"))
    out += [f"Unjudged episodes: {unjudged}; episodes whose method raised (counted as failures): {errors}.", ""]
    variants = [m for m in ORDER if m not in ("agent", "statewise")]
    out += ["## Summary", "", summary(metrics["groups"], [s for s in sets if s != "sequences"], ORDER), ""]
    out += ["## Variants against statewise, case by case", "", comparison(metrics["significance"], variants), ""]
    out += ["## Hook latency (in-process run_hook, verifiers included)", "", hook_latency(data["episodes"]), ""]
    if metrics.get("sequences"):
        out += ["## Sequences", "", sequences(metrics["sequences"]), ""]
    if metrics.get("transfer"):
        out += ["## Transfer (RQ6)", "", transfer(metrics["transfer"]), ""]
    for set_name in sets:
        if any(g["set"] == set_name for g in metrics["groups"]):  # a set of sequences only has no groups
            out += [f"## Set `{set_name}`", "", group_rows(metrics["groups"], set_name), ""]
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
