"""A session's first guarded call inside the real clients, with no StateWise worker anywhere.

    python benchmarks/first_call_clients.py [--runs 5] [--clients claude,codex,gemini]

``hook_speed.py`` times the hook alone, spawned right after SessionStart with no gap: there the
first guarded call with no worker anywhere (the first use after a reboot, or after 8 idle
hours) imports the guard itself, about 25x ``python -c pass`` (issue 27, not met). In a real
client the prompt's hook and the model's first turn lie between SessionStart and the first tool
call. This measures what a user gets there: each client (the pinned Claude Code, Codex and
Gemini CLI the end-to-end tests install) runs headless against the scripted model server on
127.0.0.1, one turn that calls the shell tool with ``git push origin feature`` (a guarded call:
the push is checked against the origin's branch protection), then plain text. Interleaved
rounds, the order reversed every round, three settings:

- ``plain``: no hooks (the baseline);
- ``warm``: the hooks ``statewise install`` writes, a worker alive from the earlier runs (the
  runtime folder kept);
- ``cold``: the same hooks, a new empty runtime folder for the run (``STATEWISE_RUNTIME_DIR``):
  no worker anywhere when the session starts, so SessionStart starts one.

It prints, per client, the median wall time of a run in each setting, ``cold - warm`` (what the
missing worker costs the session, in milliseconds) with a 95 % bootstrap interval of the
per-round differences, and in how many cold runs the worker SessionStart started answered the
push (its status file counts the calls it served): 0 of N means the hook checked the push
itself. The scripted model answers at once, so the gap between SessionStart and the first tool
call is the client's own; a real model's first turn only widens it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from client_overhead import SHELL_TOOL  # noqa: E402  (each client's shell tool, as client_overhead.py names it)
from tests.e2e.clients import Workspace, installed_clients  # noqa: E402
from tests.e2e.conftest import build_workspace  # noqa: E402
from tests.e2e.model_server import Step  # noqa: E402

from statewise.sandbox import git  # noqa: E402

PUSH = "git push origin feature"


def _step(client: str) -> Step:
    key = "cmd" if client == "codex" else "command"
    return Step(SHELL_TOOL[client], {key: PUSH})


#: Put in place of the wrapper `statewise install` writes: runs it unchanged (the wrapper is a
#: shell and Python file that reads itself by its own path, so it keeps working under another
#: name) and appends each call's event, start and end (ns) and exit status to a log.
SHIM = """#!/bin/sh
start=$(date +%s%N)
"$(dirname "$0")/statewise-hook.timed" "$@"
status=$?
echo "$2 $start $(date +%s%N) $status" >> "$(dirname "$0")/../hook-times.log"
exit $status
"""


def _time_hooks(space: Workspace) -> Path:
    """Wrap the workspace's hook wrapper with :data:`SHIM`; the log it writes."""
    wrapper = space.work / ".statewise" / "bin" / "statewise-hook"
    wrapper.rename(wrapper.with_name("statewise-hook.timed"))
    wrapper.write_text(SHIM, encoding="utf-8")
    wrapper.chmod(0o755)
    return space.work / ".statewise" / "hook-times.log"


def _hook_times(log: Path, since: int) -> list[tuple[str, float]]:
    """The (event, milliseconds) of every hook call logged from line ``since`` on, in order."""
    lines = log.read_text(encoding="utf-8").splitlines()[since:] if log.exists() else []
    return [(event, (int(end) - int(start)) / 1e6) for event, start, end, _ in (line.split() for line in lines)]


def _python_pass_ms(python: str) -> float:
    """One `python -c pass` of the interpreter the wrapper runs, in ms (the floor of a ratio)."""
    started = time.perf_counter_ns()
    subprocess.run([python, "-c", "pass"], check=True)
    return (time.perf_counter_ns() - started) / 1e6


def _lines(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def _workers(directory: str) -> list[dict[str, object]]:
    from statewise.integrations.warm import running_workers

    return running_workers(directory)


def _stop_workers(directory: str) -> None:
    """End the workers of ``directory`` (a cold run's), so they do not load the next runs."""
    for status in _workers(directory):
        try:
            os.kill(int(str(status["pid"])), signal.SIGTERM)
        except OSError:
            pass


def _served(directory: str) -> int:
    """How many calls the worker of ``directory`` has answered (0: none alive)."""
    return max((int(str(status.get("served", 0))) for status in _workers(directory)), default=0)


def difference_interval(later: list[float], earlier: list[float], *, draws: int = 2000,
                        seed: int = 0) -> tuple[float, float, float]:
    """The median of the per-round differences ``later - earlier`` and a 95 % bootstrap interval
    of that median: (median, low, high)."""
    differences = [a - b for a, b in zip(later, earlier, strict=True)]
    pick = random.Random(seed)
    medians = sorted(statistics.median(pick.choices(differences, k=len(differences))) for _ in range(draws))
    return statistics.median(differences), medians[int(0.025 * draws)], medians[int(0.975 * draws) - 1]


def _run(space: Workspace, client: str, runtime: str) -> float:
    os.environ["STATEWISE_RUNTIME_DIR"] = runtime  # Workspace.base_env passes it to the client and its hooks
    run = space.run(client, [_step(client)])
    assert run.returncode == 0, run.describe()
    results = run.server.tool_results()
    assert results and "rejected" not in results[0] and "StateWise" not in results[0], run.describe()
    return run.seconds


def measure(client: str, client_bin: Path, runs: int) -> dict[str, object]:
    """Time the three settings of ``client`` in interleaved rounds; the figures of one client."""
    with tempfile.TemporaryDirectory(prefix=f"swfc-{client}-") as temporary:
        root = Path(temporary)
        spaces = {name: build_workspace(root / name, client_bin) for name in ("plain", "warm", "cold")}
        logs: dict[str, Path] = {}
        for name in ("warm", "cold"):
            spaces[name].install(client)
            logs[name] = _time_hooks(spaces[name])
        hooks: dict[str, list[tuple[str, float]]] = {"warm": [], "cold": []}
        for space in spaces.values():
            git(space.work, "branch", "feature")
        # Short folders: a Unix socket's path holds 107 bytes.
        warm_runtime = tempfile.mkdtemp(prefix="swfw", dir="/tmp")
        try:
            for space in spaces.values():  # the client's first-run work, and the project's first session
                _run(space, client, warm_runtime)
            wall: dict[str, list[float]] = {name: [] for name in spaces}
            cold_served: list[int] = []
            served_warm = [0, 0]  # calls the warm worker served: before the rounds, after them
            served_warm[0] = _served(warm_runtime)
            names = list(spaces)
            floor: list[float] = []
            for round_number in range(runs):
                floor += [_python_pass_ms(sys.executable) for _ in range(3)]
                for name in names if round_number % 2 == 0 else names[::-1]:
                    since = _lines(logs[name]) if name in logs else 0
                    if name != "cold":
                        wall[name].append(_run(spaces[name], client, warm_runtime))
                        if name in logs:
                            hooks[name] += _hook_times(logs[name], since)
                        continue
                    cold_runtime = tempfile.mkdtemp(prefix="swfc", dir="/tmp")
                    try:
                        wall[name].append(_run(spaces[name], client, cold_runtime))
                        hooks[name] += _hook_times(logs[name], since)
                        deadline = time.monotonic() + 2  # the status file is written as a call ends
                        served = 0
                        while time.monotonic() < deadline:
                            served = _served(cold_runtime)
                            if served:
                                break
                            time.sleep(0.05)
                        cold_served.append(served)
                    finally:
                        _stop_workers(cold_runtime)
                        shutil.rmtree(cold_runtime, ignore_errors=True)
            served_warm[1] = _served(warm_runtime)
        finally:
            _stop_workers(warm_runtime)
            shutil.rmtree(warm_runtime, ignore_errors=True)
    figures: dict[str, object] = {name: statistics.median(values) for name, values in wall.items()}
    figures["cold - warm ms"] = [round(1000 * v, 1) for v in difference_interval(wall["cold"], wall["warm"])]
    figures["warm - plain ms"] = [round(1000 * v, 1) for v in difference_interval(wall["warm"], wall["plain"])]
    figures["python -c pass ms p50"] = round(statistics.median(floor), 1)
    for name, calls in hooks.items():
        events = sorted({event for event, _ in calls})
        figures[f"{name} hook ms p50 by event"] = {
            event: round(statistics.median(ms for e, ms in calls if e == event), 1) for event in events}
        figures[f"{name} hook x pass by event"] = {
            event: round(ms / statistics.median(floor), 2)
            for event, ms in figures[f"{name} hook ms p50 by event"].items()}  # type: ignore[attr-defined]
    figures["cold runs answered by the worker"] = f"{sum(served > 0 for served in cold_served)} of {runs}"
    figures["calls a worker served per run (warm, cold)"] = [(served_warm[1] - served_warm[0]) / runs,
                                                             statistics.median(cold_served)]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds; every setting runs once per round")
    parser.add_argument("--clients", default="claude,codex,gemini")
    options = parser.parse_args(argv)
    client_bin = installed_clients()
    results = {client: measure(client, client_bin, options.runs) for client in options.clients.split(",")}
    load = os.getloadavg()
    print(f"a session's first guarded call ({PUSH}), {options.runs} interleaved rounds, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'client':7} {'plain s':>8} {'warm s':>8} {'cold s':>8} {'warm - plain ms [95%]':>26} "
          f"{'cold - warm ms [95%]':>26}  cold runs answered by the worker")
    for client, figures in results.items():
        warm_plain = figures["warm - plain ms"]
        cold_warm = figures["cold - warm ms"]
        print(f"{client:7} {figures['plain']:8.3f} {figures['warm']:8.3f} {figures['cold']:8.3f} "
              f"{warm_plain[0]:8.1f} [{warm_plain[1]:.1f}, {warm_plain[2]:.1f}]".ljust(60) +  # type: ignore[index]
              f"{cold_warm[0]:8.1f} [{cold_warm[1]:.1f}, {cold_warm[2]:.1f}]".rjust(26) +  # type: ignore[index]
              f"  {figures['cold runs answered by the worker']}; calls served per run, warm and cold: "
              f"{figures['calls a worker served per run (warm, cold)']}")
    print("each hook's own wall time inside the client (the wrapper's whole run), p50 ms by event, and as a "
          "multiple of `python -c pass` timed in the same rounds:")
    for client, figures in results.items():
        print(f"{client:7} python -c pass {figures['python -c pass ms p50']} ms")
        for name in ("warm", "cold"):
            print(f"{client:7} {name:5} {figures[f'{name} hook ms p50 by event']}")
            print(f"{client:7} {name:5} {figures[f'{name} hook x pass by event']}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
