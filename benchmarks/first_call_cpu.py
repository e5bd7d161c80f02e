"""The CPU a session's first guarded call costs when no worker is alive (no SessionStart before
it): the hook's own processes (the shell, the wrapper, the interpreter, git) and the warm worker
it starts, until that worker listens, side by side for one or more checkouts' code.

    python benchmarks/first_call_cpu.py [--rounds 8] [--code NAME=SRC ...]

Each ``--code`` names a ``src`` folder (default: this checkout's), run with ``PYTHONPATH`` set to
it, in a world of its own built as ``hook_speed.py`` builds one (a repository with a bare
origin, ``statewise init`` and ``statewise install claude-code``). Each round sends ``git push
origin feature`` through the installed command with a fresh runtime folder (so no worker), the
codes interleaved; it prints the medians of the wall time, of the hook's CPU (user + system of
the processes this script reaps) and of the worker's CPU until it listens (``/proc/<pid>/stat``,
in clock ticks: Linux only), with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import hook_speed


def _worker_cpu_ms(runtime: Path) -> float:
    """The CPU the worker in ``runtime`` used until now (it was just seen listening), then end it."""
    status = json.loads(next(runtime.glob("*.json")).read_text())
    fields = Path(f"/proc/{status['pid']}/stat").read_text().rsplit(")", 1)[1].split()
    used = (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    os.kill(status["pid"], signal.SIGTERM)
    hook_speed._end_worker(runtime)
    return used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--code", action="append", default=[], metavar="NAME=SRC")
    options = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    codes = dict(item.split("=", 1) for item in options.code) or {"this": here}
    with tempfile.TemporaryDirectory(prefix="statewise-first-call-") as temporary:
        worlds = {}
        for name, src in codes.items():
            root = Path(temporary) / name
            root.mkdir()
            env = {**os.environ, "PYTHONPATH": src, "STATEWISE_CACHE_DIR": str(root / "cache"),
                   "GIT_CONFIG_NOSYSTEM": "1", "STATEWISE_RUNTIME_DIR": str(root / "install")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env.pop("STATEWISE_STORE", None)
            work, hooks = hook_speed._world(root, "claude-code", env)
            hook_speed._end_worker(root / "install")  # the one `statewise install` started
            push = hook_speed._payloads("claude-code", work)["git push origin feature"][2]
            command = ["/bin/sh", "-c", hooks["PreToolUse"][-1]["hooks"][0]["command"]]
            # Warm the caches (the observation index, bytecode), without a worker.
            subprocess.run(command, input=push, text=True, capture_output=True, cwd=work,
                           env={**env, "STATEWISE_NO_WARM": "1"}, check=True)
            worlds[name] = (root, env, work, push, command)
        samples: dict[str, dict[str, list[float]]] = {name: {"wall": [], "hook": [], "worker": []} for name in codes}
        load = os.getloadavg()
        for index in range(options.rounds):
            for name, (root, env, work, push, command) in worlds.items():
                runtime = root / f"round-{index}"
                before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                done = subprocess.run(command, input=push, text=True, capture_output=True, cwd=work,
                                      env={**env, "STATEWISE_RUNTIME_DIR": str(runtime)}, timeout=120)
                wall = (time.perf_counter() - started) * 1000
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                assert done.returncode == 0, done.stderr
                if hook_speed._await_listening(runtime) is None:
                    raise SystemExit(f"{name}: no worker listened in {runtime}")
                samples[name]["wall"].append(wall)
                used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                samples[name]["hook"].append(used * 1000)
                samples[name]["worker"].append(_worker_cpu_ms(runtime))
    print(f"a session's first guarded call, no worker alive, {options.rounds} interleaved rounds (medians, ms), "
          f"load average {load[0]:.2f} (at the end {os.getloadavg()[0]:.2f})")
    for name, values in samples.items():
        total = statistics.median([hook + worker for hook, worker in
                                   zip(values["hook"], values["worker"], strict=True)])
        print(f"{name:10} wall {statistics.median(values['wall']):7.1f} | hook CPU "
              f"{statistics.median(values['hook']):6.1f} | worker CPU until it listens "
              f"{statistics.median(values['worker']):6.1f} | both {total:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
