"""The public bulk import and the guarded hook at each store size, and concurrent hooks on PostgreSQL.

Part of benchmarks/store_speed.py (split for size; the script documents the whole)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from storebench.dataset import KEYS, Dataset
from storebench.timing import stats


def jsonl_line(row: tuple[Any, ...]) -> str:
    """The ``record export`` line of one encoded record row (the value is already JSON)."""
    (rid, key, scope, value_type, value_json, status, observed, recorded, verified, ttl, source, authority, actor,
     reference, supersedes, superseded_by, version, status_reason, status_changed_at) = row
    rest = {"value_type": value_type, "scope": scope, "status": status,
            "time": {"observed_at": observed, "recorded_at": recorded, "verified_at": verified, "ttl_seconds": ttl},
            "provenance": {"source": source, "authority": authority, "actor": actor, "reference": reference},
            "supersedes": supersedes, "superseded_by": superseded_by, "version": version,
            "status_reason": status_reason, "status_changed_at": status_changed_at}
    return (f'{{"type": "record", "id": {json.dumps(rid)}, "key": {json.dumps(key)}, "value": {value_json}, '
            + json.dumps(rest)[1:] + "\n")


def write_jsonl(path: Path, dataset: Dataset) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for row in dataset.rows:
            out.write(jsonl_line(row))
        for link in dataset.links:
            out.write(json.dumps({"type": "link", **link.model_dump(mode="json")}) + "\n")


def bench_contract(path: Path) -> Path:
    """A contract (extending the built-in one) that declares every key the data uses, so the
    CLI import checks each line against a key schema, as it does for a user."""
    from statewise.contract import builtin_contract

    builtin = builtin_contract()
    lines = ["name: store-bench", "version: 1", "description: the store benchmark's keys", "extends: coding",
             "state:"]
    for spec in KEYS:
        if builtin.key_type(spec.key) is not None or builtin.key_type(spec.key + "[x]") is not None:
            continue
        lines += [f"  {spec.key}:", f"    type: {spec.value_type.value}", "    scope: global",
                  f"    authority: {'machine' if spec.machine else 'developer'}", "    description: benchmark key"]
        if spec.key.endswith("package_version"):
            lines.append("    qualified: true")
        if spec.choices:
            lines.append(f"    choices: [{', '.join(spec.choices)}]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# The child's own peak RSS. ``ru_maxrss`` from wait4 will not do: a child forked from this
# process starts with this process's pages counted, and the kernel keeps that high-water mark
# across exec, so a child of a 1.5 GB benchmark "peaks" at 1.5 GB. VmHWM is the exec'd
# program's own memory only.
PEAK_RSS_WRAPPER = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write('\\nVmHWM ' + line.split()[1] + '\\n')\n"
    "atexit.register(_peak)\n"
)


def peak_rss_mib(stderr: str) -> float:
    """The VmHWM line PEAK_RSS_WRAPPER wrote, in MiB (NaN if missing)."""
    for line in stderr.splitlines():
        if line.startswith("VmHWM "):
            return int(line.split()[1]) / 1024
    return math.nan


def bench_import(tmp: Path, jsonl: Path, n_lines: int, api: bool) -> dict[str, Any]:
    """``statewise record import`` in a child process (wall, CPU, peak RSS) and, with ``api``,
    ``Store.import_jsonl`` on the open file in this process, each into an empty store."""
    contract = bench_contract(tmp / "contract.yaml")
    target = tmp / "imported-cli.db"
    argv = [sys.executable, "-c", PEAK_RSS_WRAPPER + "from statewise.cli import main\nmain(prog_name='statewise')\n",
            "--contract", str(contract), "--store", str(target), "record", "import", "--no-progress", str(jsonl)]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0 or f"imported {n_lines} lines" not in out:
        raise SystemExit(f"record import failed: {out}{err}")
    result: dict[str, Any] = {
        "cli_seconds": wall, "cli_cpu_seconds": usage.ru_utime + usage.ru_stime,
        "cli_peak_rss_mib": peak_rss_mib(err), "jsonl_mib": jsonl.stat().st_size / 2**20,
        "loadavg": [load_before, os.getloadavg()[0]],
    }
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    if api:
        # In a child process too, as a user's script would run it: this benchmark's own heap
        # (a million generated rows) would otherwise make every collection walk it.
        target = tmp / "imported-api.db"
        script = ("import sys, time\nfrom statewise.contract import load_contract\n"
                  "from statewise.store import open_store\n"
                  "store = open_store(sys.argv[1], key_schema=load_contract(sys.argv[2]))\n"
                  "started = time.perf_counter()\nwith open(sys.argv[3], encoding='utf-8') as handle:\n"
                  "    count = store.import_jsonl(handle, source=sys.argv[3])\n"
                  "print(count, time.perf_counter() - started)\n")
        child = subprocess.Popen([sys.executable, "-c", PEAK_RSS_WRAPPER + script, str(target), str(contract),
                                  str(jsonl)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
        if os.waitstatus_to_exitcode(status) != 0 or out.split()[:1] != [str(n_lines)]:
            raise SystemExit(f"Store.import_jsonl failed: {out}{err}")
        result["api_seconds"] = float(out.split()[1])
        result["api_cpu_seconds"] = usage.ru_utime + usage.ru_stime
        result["api_peak_rss_mib"] = peak_rss_mib(err)
        for suffix in ("", "-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
    return result


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args], cwd=cwd,
                   check=True, capture_output=True, timeout=60)


def hook_world(root: Path) -> tuple[Path, str]:
    """A real repository with a bare origin, on a feature branch; and the PreToolUse JSON of
    ``git push origin feature`` that Claude Code hands its hook there."""
    root.mkdir(parents=True, exist_ok=True)
    origin, work = root / "origin.git", root / "work"
    _git(root, "init", "-q", "--bare", str(origin))
    _git(root, "init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("bench\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "init")
    _git(work, "remote", "add", "origin", str(origin))
    _git(work, "push", "-q", "origin", "main")
    _git(work, "checkout", "-q", "-b", "feature")
    payload = json.dumps({"session_id": "bench", "cwd": str(work), "hook_event_name": "PreToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "git push origin feature"},
                          "tool_use_id": "toolu_bench"})
    return work, payload


def hook_call(work: Path, payload: str, store: str, env: dict[str, str]) -> tuple[float, str]:
    """One guarded call through the hook's entry point; (wall ms, decision)."""
    argv = [sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre", "--store", store]
    started = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, cwd=work, env=env, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"hook failed ({done.returncode}): {done.stdout}{done.stderr}")
    return elapsed, done.stdout.strip()


def hook_env(root: Path) -> dict[str, str]:
    env = {**os.environ, "STATEWISE_CACHE_DIR": str(root / "cache"), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("STATEWISE_STORE", None)
    return env


def bench_hook(store: str, calls: int, root: Path) -> dict[str, Any]:
    """p50/p95 of the guarded ``git push origin feature`` call against ``store``, one call at
    a time, after one untimed call (the first call of a session warms caches)."""
    work, payload = hook_world(root)
    env = hook_env(root)
    _, decision = hook_call(work, payload, store, env)
    load_before = os.getloadavg()[0]
    samples = [hook_call(work, payload, store, env)[0] for _ in range(calls)]
    return {**stats([int(ms * 1e6) for ms in samples]), "decision": decision[:160],
            "loadavg": [load_before, os.getloadavg()[0]]}


def audit_lost_updates(rows: list[tuple[Any, ...]], verify_links: dict[str, int]) -> int:
    """Writes that left no trace: a record's version counts every change made to it (a status
    change, a confirmation), so version - 1 must equal its confirmations plus one if it is no
    longer active; anything else is an update another writer overwrote."""
    lost = 0
    for rid, status, version in rows:
        lost += version - 1 != verify_links.get(rid, 0) + (status != "active")
    return lost


def bench_concurrent_hooks(dsn: str, processes: int, rounds: int, root: Path) -> dict[str, Any]:
    """``processes`` hook processes at once on one store, ``rounds`` times: p50/p95 of each
    guarded call's wall time, failures, and the decisions seen."""
    work, payload = hook_world(root)
    env = hook_env(root)
    hook_call(work, payload, dsn, env)  # warm the caches, as a session's first call does
    argv = [sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre", "--store", dsn]
    samples: list[float] = []
    failures = 0
    decisions: dict[str, int] = {}
    load_before = os.getloadavg()[0]
    for _ in range(rounds):
        started = {}
        children = []
        for _ in range(processes):
            child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=work, env=env)
            started[child.pid] = time.perf_counter()
            children.append(child)
        for child in children:
            out, err = child.communicate(payload, timeout=300)
            samples.append((time.perf_counter() - started[child.pid]) * 1000)
            failures += child.returncode != 0
            decision = out.strip()[:100]
            if child.returncode != 0:
                # What a non-zero exit said (Claude Code reads exit 2 as a block, with stderr
                # as the reason): the failure's cause goes into the output, not only its count.
                last = (err.strip().splitlines() or [""])[-1][:120]
                decision = f"exit {child.returncode}: {last}"
            decisions[decision] = decisions.get(decision, 0) + 1
    return {**stats([int(ms * 1e6) for ms in samples]), "processes": processes, "rounds": rounds,
            "failures": failures, "decisions": decisions, "loadavg": [load_before, os.getloadavg()[0]]}


