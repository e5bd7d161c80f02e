"""Guard overhead: the time the guard itself adds, and planner calls against naive probing.

Scenario: a real git sandbox (origin protects main), a SQLite store holding 50 records that
apply to the task (recently confirmed by their authority, so no verifier has to run), the
rule planner, and a correct proposal (push a feature branch). Each iteration runs one
``Guard.check``. The report's ``guard_seconds`` is wall time minus the time spent inside the
planner and the verifiers, which is the overhead this benchmark is about.

Side by side, it counts the planner calls the guard made and the calls naive probing would
make: every retrieved record with every probe kind (remove, mask, alternative), plus the
proposal itself.

A third mode sets ``recheck_after=0``, so that every machine-observable premise of the push
(a high-risk operation) is observed again by its verifier on every check, as it is when the
records were confirmed longer ago than the guard's recheck window: the verifiers' own time
is excluded, but handling their evidence and refreshing ``verified_at`` in the store count.

Usage::

    python benchmarks/guard_speed.py [--records 50] [--iterations 200] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from statewise.actions import Action
from statewise.contract import builtin_contract
from statewise.pipeline import Guard, GuardConfig
from statewise.planners.base import Task
from statewise.planners.rules import RulePlanner
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

MACHINE = Provenance(source="observation", authority="machine", actor="benchmark")
DEVELOPER = Provenance(source="developer", authority="developer", actor="benchmark")


def seed(store: SQLiteStore, scope, records: int) -> None:
    now = datetime.now(UTC)
    repo, branch, workspace = scope.repo, scope.branch, scope.workspace
    fixed = [
        ("repository.protected", True, f"repo:{repo}@{branch}", MACHINE),
        ("repository.protected_branches", ["main", "release/*"], f"repo:{repo}", MACHINE),
        ("git.current_branch", branch, f"workspace:{workspace}", MACHINE),
        ("git.remotes", ["origin"], f"workspace:{workspace}", MACHINE),
        ("git.default_branch", "main", f"repo:{repo}", MACHINE),
        ("user.allow_force_push", False, f"user:{scope.user}", DEVELOPER),
        ("project.test_command", "pytest -x", f"repo:{repo}", DEVELOPER),
        ("runtime.python_version", "3.11.7", f"workspace:{workspace}", MACHINE),
    ]
    for key, value, record_scope, provenance in fixed[:records]:
        store.put(RecordDraft(key=key, value=value, scope=record_scope, provenance=provenance, verified_at=now))
    for index in range(max(0, records - len(fixed))):
        store.put(RecordDraft(key=f"python.package_version[package{index}]", value=f"1.{index}.0",
                              scope=f"workspace:{workspace}", provenance=MACHINE, verified_at=now))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="statewise-guard-speed-") as folder:
        sandbox = make_git_sandbox(Path(folder) / "sandbox", diverged=False)
        scope = derive_task_scope(sandbox.work, user="bench")
        store = SQLiteStore(Path(folder) / "store.db", key_schema=builtin_contract())
        seed(store, scope, options.records)
        retrieved = len(store.retrieve(scope).records)
        proposal = Action(tool="git", operation="git.push", target="origin/agent/push-the-changes",
                          args={"remote": "origin", "branch": "agent/push-the-changes", "source": "HEAD",
                                "set_upstream": True}, scope=str(scope.most_specific),
                          reason="push a feature branch and open a pull request")
        task = Task(text="push the changes", scope=scope)
        results = {}
        modes = (("with rule planner", RulePlanner(), GuardConfig()),
                 ("hook mode (no planner)", None, GuardConfig()),
                 ("rule planner, re-observing", RulePlanner(), GuardConfig(recheck_after=0)))
        for mode, planner, config in modes:
            guard = Guard(store, planner=planner, workspace=sandbox.work, config=config)
            for _ in range(10):
                guard.check(task, proposal)
            overhead, wall, calls, verifier_calls = [], [], [], []
            for _ in range(options.iterations):
                started = time.perf_counter()
                decision = guard.check(task, proposal)
                wall.append(time.perf_counter() - started)
                assert decision.execute, decision.reason
                overhead.append(decision.report.costs.guard_seconds)
                calls.append(decision.report.costs.planner_calls)
                verifier_calls.append(decision.report.costs.verifier_calls)
            naive = 1 + retrieved * 3 if planner is not None else 0
            results[mode] = {
                "guard_overhead_ms_p50": round(statistics.median(overhead) * 1000, 3),
                "guard_overhead_ms_p95": round(percentile(overhead, 0.95) * 1000, 3),
                "wall_ms_p50": round(statistics.median(wall) * 1000, 3),
                "planner_calls": statistics.median(calls),
                "naive_planner_calls": naive,
                "verifier_calls": statistics.median(verifier_calls),
            }
        store.close()

    print(f"guard overhead with {retrieved} retrieved records, {options.iterations} iterations "
          f"(python {platform.python_version()}, {platform.machine()})")
    print(f"{'mode':<26} {'overhead p50':>13} {'p95':>9} {'wall p50':>9} {'planner calls':>14} "
          f"{'naive calls':>12} {'ratio':>7} {'verifier calls':>15}")
    for mode, row in results.items():
        ratio = f"{row['planner_calls'] / row['naive_planner_calls']:.3f}" if row["naive_planner_calls"] else "-"
        print(f"{mode:<26} {row['guard_overhead_ms_p50']:>10.3f} ms {row['guard_overhead_ms_p95']:>6.3f} ms "
              f"{row['wall_ms_p50']:>6.3f} ms {row['planner_calls']:>14} {row['naive_planner_calls']:>12} "
              f"{ratio:>7} {row['verifier_calls']:>15}")
    goal = results["with rule planner"]["guard_overhead_ms_p50"] < 2.0
    print(f"goal: guard overhead p50 under 2 ms with {retrieved} records: {'met' if goal else 'MISSED'}")
    if options.json:
        options.json.write_text(json.dumps({"records": retrieved, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
