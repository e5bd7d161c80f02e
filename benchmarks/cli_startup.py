"""Start-up of the command line as a person pays it, beside ``python -c pass`` from the same
interpreter, interleaved in one run (issue 28 item 2).

    python benchmarks/cli_startup.py [--iterations 30] [--statewise PATH] [--case TEXT ...]

Cases, each a fresh process: ``python -c pass`` (the floor), ``python -c "import click"`` (what
any click command pays), ``statewise --help`` (answered by the front door, statewise.__main__),
``statewise record --help`` (click, no store), ``statewise record list`` in a git repository
whose store holds a few records, and ``statewise mcp`` until it answers ``initialize`` on stdin
(the process is started, the request written at once, and the clock stops at the answer's
line). Prints p50 and p90 wall time per case, the ratio of the p50 to the floor's, the p50 of
the process's CPU time (user + system, which a loaded machine inflates far less than wall
time; for ``mcp`` it includes the exit after stdin closes), each goal (3x for ``--help`` and
``record list``, 1 s for ``mcp``), and the load average before and after.

``--breakdown`` prints instead where ``statewise mcp``'s start-up CPU time goes, stage by stage
in one process (the SDK's import, StateWise's own modules, building the server), each stage's
p50 over ``--iterations`` fresh processes.

``statewise`` is the console script beside this interpreter (override with ``--statewise``).
``--case TEXT`` (repeatable) runs only the cases whose name contains TEXT, with the floor
always (``--case "record list"``: a shorter run, without ``mcp``'s seconds per round).
Python writes bytecode caches as an installed package has them: one unmeasured run of each case
comes first. ``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

GOAL_RATIO = 3.0
GOAL_MCP_SECONDS = 1.0

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["COLUMNS"] = "100"  # a terminal of ordinary width (the front door answers at 80 or more)
    return env


def _project(root: Path, statewise: str, env: dict[str, str]) -> Path:
    work = root / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([statewise, "init"], cwd=work, env=env, check=True, capture_output=True)
    for key, value in (("git.default_branch", "main"), ("project.test_command", "pytest -q"),
                       ("runtime.python_version", "3.11")):
        subprocess.run([statewise, "record", "add", key, value, "--scope", "global"], cwd=work, env=env, check=True,
                       capture_output=True)
    return work


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def _mcp_initialize(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(INITIALIZE.encode())
        process.stdin.flush()
        line = process.stdout.readline()
        elapsed = time.perf_counter() - started
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if b'"id":1' not in line.replace(b" ", b"") or b'"result"' not in line:
        raise SystemExit(f"statewise mcp did not answer initialize: {line[:300]!r} {process.stderr.read()[-500:]!r}")
    return elapsed


#: The stages of ``statewise mcp``'s start-up, each timed (CPU) after the ones before it.
BREAKDOWN = """
import resource, sys
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
times = {}
last = cpu()
def mark(name):
    global last
    now = cpu()
    times[name] = now - last
    last = now
import click, pydantic, anyio
mark("click, pydantic, anyio")
import mcp_types
mark("the SDK: mcp_types")
import mcp
mark("the SDK: import mcp (its client, stdio server)")
import mcp.server.mcpserver
mark("the SDK: mcp.server.mcpserver (HTTP, auth)")
import statewise.cli, statewise.contract, statewise.store, statewise.pipeline, statewise.planners
mark("StateWise: cli, contract, store, pipeline, planners")
from statewise.integrations.mcp_server import build_server
mark("StateWise: integrations.mcp_server")
import rich.console, rich.logging
mark("rich logging (the SDK's MCPServer() sets it up)")
build_server(store_location=None, contract_path=None, workspace=None)
mark("build_server (tool schemas)")
print(repr(times))
"""


def breakdown(iterations: int, cwd: Path, env: dict[str, str]) -> None:
    import ast

    runs = [ast.literal_eval(subprocess.run([sys.executable, "-c", BREAKDOWN], cwd=cwd, env=env, check=True,
                                            capture_output=True, text=True).stdout)
            for _ in range(iterations)]
    print(f"{'stage of statewise mcp start-up':<52} {'cpu ms p50':>10}")
    for name in runs[0]:
        print(f"{name:<52} {statistics.median(run[name] for run in runs) * 1000:10.1f}")
    total = statistics.median(sum(run.values()) for run in runs)
    print(f"{'total':<52} {total * 1000:10.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--statewise", default=str(Path(sys.executable).parent / "statewise"),
                        help="the console script (default: beside this interpreter)")
    parser.add_argument("--breakdown", action="store_true", help="where statewise mcp's start-up CPU time goes")
    parser.add_argument("--case", action="append", default=[], metavar="TEXT",
                        help="run only the cases whose name contains TEXT (repeatable; the floor always runs)")
    args = parser.parse_args(argv)
    env = _env()
    if args.breakdown:
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; Python {sys.version.split()[0]}")
        with tempfile.TemporaryDirectory(prefix="statewise-cli-startup-") as scratch:
            breakdown(args.iterations, Path(scratch), env)
        return
    python = sys.executable
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="statewise-cli-startup-") as scratch:
        work = _project(Path(scratch), args.statewise, env)

        def run(command: list[str]) -> Callable[[], float]:
            return lambda: _timed(command, work, env)

        cases: dict[str, Callable[[], float]] = {  # each returns its wall time
            "python -c pass": run([python, "-c", "pass"]),
            "python -c 'import click'": run([python, "-c", "import click"]),
            "statewise --help": run([args.statewise, "--help"]),
            "statewise record --help": run([args.statewise, "record", "--help"]),
            "statewise record list": run([args.statewise, "record", "list"]),
            "statewise mcp (initialize)": lambda: _mcp_initialize([args.statewise, "mcp"], work, env),
        }
        if args.case:
            cases = {name: measure for name, measure in cases.items()
                     if name == "python -c pass" or any(text in name for text in args.case)}
        for measure in cases.values():  # bytecode caches, the contract cache: as an installed package runs
            measure()
        times: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.iterations):
            for name, measure in cases.items():
                before = _children_cpu()  # every child is waited for, so its CPU time is counted
                times[name].append(measure())
                cpu[name].append(_children_cpu() - before)
    load_after = os.getloadavg()
    floor = statistics.median(times["python -c pass"])
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
          f"{args.iterations} interleaved rounds; Python {sys.version.split()[0]}")
    print(f"{'case':<28} {'p50 ms':>8} {'p90 ms':>8} {'x pass':>7} {'cpu ms':>8}  goal")
    for name, values in times.items():
        p50 = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        if name in ("statewise --help", "statewise record list"):
            goal = f"<= {GOAL_RATIO:g}x: {'met' if p50 / floor <= GOAL_RATIO else 'NOT met'}"
        elif name.startswith("statewise mcp"):
            goal = f"<= {GOAL_MCP_SECONDS:g} s: {'met' if p50 <= GOAL_MCP_SECONDS else 'NOT met'}"
        else:
            goal = ""
        print(f"{name:<28} {p50 * 1000:8.1f} {p90 * 1000:8.1f} {p50 / floor:7.2f} "
              f"{statistics.median(cpu[name]) * 1000:8.1f}  {goal}")


if __name__ == "__main__":
    main()
