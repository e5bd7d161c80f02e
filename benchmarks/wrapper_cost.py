"""What the wrapper's shell half (the watchdog that holds before Python starts) costs: the
wrapper as an earlier commit wrote it beside the one this checkout writes, on a free call
(``git status`` before the tool runs, no warm worker), with ``python -c pass`` as the floor.

    python benchmarks/wrapper_cost.py [--before 25e86c8] [--rounds 60] [--callgrind] [--event pre|post]

Both wrappers run this checkout's hook (the same package directory), so only the wrapper
differs. ``--event post`` feeds the same ``git status`` as a finished command instead (the
post-tool call, which reads the contract's digest and the observation index; the warm-up call
writes both into the run's own cache folder). Interleaved rounds print wall p50 and the CPU
time (user + system) of the processes each call leaves to be reaped, each as a ratio to
``python -c pass``, with the load average; ``--callgrind`` instead prints the instructions of
every process of one call, summed (``valgrind --tool=callgrind --trace-children=yes``: deterministic, user space only).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from statewise.integrations import install as current


def _module_at(commit: str, folder: Path):  # type: ignore[no-untyped-def]
    text = subprocess.run(["git", "show", f"{commit}:src/statewise/integrations/install.py"], check=True,
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parent).stdout
    path = folder / "install_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("install_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["install_before"] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="25e86c8", help="the commit whose wrapper is compared")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--event", choices=["pre", "post"], default="pre")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="statewise-wrapper-cost-") as temporary:
        root = Path(temporary)
        subprocess.run(["git", "init", "-q", str(root / "work")], check=True)
        work = root / "work"
        package = str(Path(current.__file__).resolve().parents[2])
        argv: dict[str, list[str]] = {"python -c pass": [sys.executable, "-c", "pass"]}
        for name, module in (("before", _module_at(options.before, root)), ("now", current)):
            wrapper = root / f"{name}-hook"
            wrapper.write_text(module.render_wrapper(timeout=30, package_dir=package))
            wrapper.chmod(0o755)
            argv[f"wrapper {name}"] = [str(wrapper), "claude-code", options.event]
        call = {"cwd": str(work), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "session_id": "bench", "tool_input": {"command": "git status"}}
        if options.event == "post":
            call.update(hook_event_name="PostToolUse", tool_response={"stdout": "On branch main\n", "stderr": ""})
        payload = json.dumps(call)
        env = {**os.environ, "STATEWISE_NO_WARM": "1", "STATEWISE_CACHE_DIR": str(root / "cache")}
        for command in argv.values():  # warm the caches; each must answer
            done = subprocess.run(command, input=payload, capture_output=True, text=True, cwd=work, env=env)
            assert done.returncode == 0, (command, done.stderr)
        time.sleep(2.1)  # files written a moment ago are not remembered by their state (the contract's digest)
        for command in argv.values():
            subprocess.run(command, input=payload, capture_output=True, text=True, cwd=work, env=env, check=True)
        if options.callgrind:
            for name, command in argv.items():
                out = Path(tempfile.mkdtemp(dir=root))
                subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                                f"--callgrind-out-file={out}/cg.%p", *command], input=payload, capture_output=True,
                               text=True, cwd=work, env=env, check=True)
                files = list(out.iterdir())
                total = sum(int(line.split()[1]) for f in files for line in f.read_text(errors="replace").splitlines()
                            if line.startswith("summary:"))
                print(f"{name:16} {total / 1e6:6.1f} million instructions in {len(files)} processes")
            return 0
        wall: dict[str, list[float]] = {name: [] for name in argv}
        cpu: dict[str, list[float]] = {name: [] for name in argv}
        load = os.getloadavg()
        for _ in range(options.rounds):
            for name, command in argv.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run(command, input=payload, capture_output=True, text=True, cwd=work, env=env)
                wall[name].append((time.perf_counter() - started) * 1000)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (at the end {os.getloadavg()[0]:.2f}), "
              f"{options.rounds} interleaved rounds")
        floor_wall, floor_cpu = statistics.median(wall["python -c pass"]), statistics.mean(cpu["python -c pass"])
        for name in argv:
            p50, mean = statistics.median(wall[name]), statistics.mean(cpu[name])
            print(f"{name:16} wall p50 {p50:6.1f} ms {p50 / floor_wall:4.2f}x | CPU mean {mean:5.1f} ms "
                  f"{mean / floor_cpu:4.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
