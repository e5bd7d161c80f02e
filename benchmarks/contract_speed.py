"""How long a fresh process takes to get the built-in contract, side by side with its floor.

Each variant runs in its own fresh interpreter (``sys.executable -c ...``), the variants
interleaved round by round so that load on a shared machine hits them alike:

* ``python -c pass``: the interpreter's own start-up;
* ``import pydantic (bare)``: ``from pydantic import BaseModel``, which defers most of the
  package until a model class is defined;
* ``import pydantic``: ``from pydantic import BaseModel, Field``, what defining any model
  costs at least (the floor for anything that declares pydantic models; the target is
  measured against it);
* ``import statewise.contract``;
* ``builtin_contract() cold``: ``STATEWISE_NO_CACHE=1``, so the YAML is parsed and validated;
* ``builtin_contract() warm``: from the compiled contract cache (a fresh cache directory,
  filled once before the rounds).

Bytecode is compiled once into a private ``PYTHONPYCACHEPREFIX`` before the rounds, as an
installed wheel has it.

Prints p50 and p90 per variant, each p50 as a ratio to ``python -c pass``, and the warm
load's p50 over the pydantic import's, against the 40 ms target. It also checks that the
warm process never imported the CEL engine or prompt_toolkit.

    python benchmarks/contract_speed.py [--rounds 15] [--json] [--baseline-src DIR]

``--baseline-src DIR`` adds two rows for another checkout's ``src`` directory (for example
``git archive <commit> src | tar -x -C /tmp/base`` then ``--baseline-src /tmp/base/src``):
its ``import statewise.contract`` and ``builtin_contract()``, run the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_OVER_PYDANTIC_MS = 40.0

VARIANTS = [
    ("python -c pass", "pass", {}),
    ("import pydantic (bare)", "from pydantic import BaseModel", {}),
    ("import pydantic", "from pydantic import BaseModel, Field", {}),
    ("import statewise.contract", "import statewise.contract", {}),
    ("builtin_contract() cold", "import statewise.contract as c; c.builtin_contract()", {"STATEWISE_NO_CACHE": "1"}),
    ("builtin_contract() warm", "import statewise.contract as c; c.builtin_contract()", {"warm": "1"}),
]

_CHECK_MODULES = (
    "import sys, statewise.contract as c; c.builtin_contract(); "
    "print(sorted(m for m in sys.modules if m == 'cel' or m.startswith(('cel.', 'prompt_toolkit', 'typer'))))"
)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _run(code: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one fresh process running ``code``."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{code!r} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--baseline-src", help="another checkout's src directory to compare with")
    options = parser.parse_args(argv)
    variants = list(VARIANTS)
    if options.baseline_src:
        variants += [
            ("baseline: import contract", "import statewise.contract", {"PYTHONPATH": options.baseline_src}),
            ("baseline: builtin_contract()", "import statewise.contract as c; c.builtin_contract()",
             {"PYTHONPATH": options.baseline_src}),
        ]

    with tempfile.TemporaryDirectory(prefix="statewise-bench-cache-") as cache:
        base = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
        # Bytecode as an installed wheel has it (pip compiles it at install time): written once
        # to a private prefix, so PYTHONDONTWRITEBYTECODE in the caller's environment does not
        # make every run recompile the sources.
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base["PYTHONPYCACHEPREFIX"] = os.path.join(cache, "pycache")
        envs = []
        for _label, _code, extra in variants:
            env = dict(base)
            if extra.get("warm"):
                env["STATEWISE_CACHE_DIR"] = cache
            else:
                env.update(extra)
            envs.append(env)
        warm_env = envs[len(VARIANTS) - 1]
        subprocess.run([sys.executable, "-c", VARIANTS[-1][1]], env=warm_env, check=True)  # fill the cache
        leaked = subprocess.run([sys.executable, "-c", _CHECK_MODULES], env=warm_env, check=True,
                                capture_output=True, text=True).stdout.strip()
        for index, (_label, code, _extra) in enumerate(variants):
            _run(code, envs[index])  # compile the bytecode; fill the page cache
        timings: list[list[float]] = [[] for _ in variants]
        cpu: list[list[float]] = [[] for _ in variants]
        for _ in range(options.rounds):
            for index, (_label, code, _extra) in enumerate(variants):
                wall, used = _run(code, envs[index])
                timings[index].append(wall)
                cpu[index].append(used)

    rows = []
    floor = statistics.median(timings[0])
    for (label, _code, _extra), values, used in zip(variants, timings, cpu, strict=True):
        p50 = statistics.median(values)
        rows.append({"variant": label, "p50_ms": round(p50 * 1000, 1),
                     "p90_ms": round(_percentile(values, 0.9) * 1000, 1), "ratio": round(p50 / floor, 2),
                     "cpu_p50_ms": round(statistics.median(used) * 1000, 1)})
    by_label = {row["variant"]: row for row in rows}
    over = round(by_label["builtin_contract() warm"]["p50_ms"] - by_label["import pydantic"]["p50_ms"], 1)
    over_cpu = round(by_label["builtin_contract() warm"]["cpu_p50_ms"] - by_label["import pydantic"]["cpu_p50_ms"], 1)
    summary = {
        "rounds": options.rounds,
        "python": sys.version.split()[0],
        "rows": rows,
        "warm_over_pydantic_ms": over,
        "warm_over_pydantic_cpu_ms": over_cpu,
        "load_average": os.getloadavg()[0],
        "target_ms": TARGET_OVER_PYDANTIC_MS,
        "meets_target": over <= TARGET_OVER_PYDANTIC_MS,
        "engine_modules_in_warm_process": json.loads(leaked.replace("'", '"')) if leaked else [],
    }
    if options.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{'variant':<28}{'p50 ms':>9}{'p90 ms':>9}{'x pass':>8}{'CPU p50 ms':>12}")
    for row in rows:
        print(f"{row['variant']:<28}{row['p50_ms']:>9.1f}{row['p90_ms']:>9.1f}{row['ratio']:>8.2f}"
              f"{row['cpu_p50_ms']:>12.1f}")
    verdict = "meets" if summary["meets_target"] else "MISSES"
    print(f"\nwarm builtin_contract() over import pydantic: {over:.1f} ms wall, {over_cpu:.1f} ms CPU ({verdict} the "
          f"{TARGET_OVER_PYDANTIC_MS:.0f} ms target on wall time; {options.rounds} rounds, Python {summary['python']}, "
          f"load average {summary['load_average']:.2f})")
    print(f"CEL / prompt_toolkit modules in the warm process: {summary['engine_modules_in_warm_process'] or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
