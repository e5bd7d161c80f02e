"""Where a guarded call's check goes when no warm worker answers it (issue 27's cold path): the
guard's import and the first check, in one fresh process each run, as the hook runs them.

    python benchmarks/cold_check_profile.py [--runs 3]

Builds the world ``hook_speed.py`` builds (a repository with a bare origin, ``statewise init``
and ``statewise install claude-code``), then, in ``--runs`` fresh interpreters, imports the
guard (``from statewise.integrations.hooks import run_hook``) and checks ``git push origin
feature`` with ``run_hook`` (no worker: ``STATEWISE_NO_WARM=1``). Prints the medians of:

- the CPU (user + system) of the import and of the check;
- ``-X importtime``'s self times summed by package (a third-party package whole, StateWise's
  modules by subpackage), in a run of their own (the tracing adds its own cost);
- the check's calls under ``cProfile`` (a run of its own) in the groups that account for it:
  modules imported during the check, dataclasses made, regular expressions compiled, CEL
  expressions compiled, the contract's invariants, the store's open, the verifier.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import hook_speed

CHILD = r"""
import sys, resource
mode = sys.argv[1]
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
start = cpu()
from statewise.integrations.hooks import run_hook
imported = cpu()
raw = open(sys.argv[2]).read()
if mode == "profile":
    import cProfile, pstats
    profile = cProfile.Profile()
    profile.enable()
outcome = run_hook("claude-code", raw, event="pre", store_location=None, contract_path=None, on_pass=None)
checked = cpu()
assert outcome.exit_code == 0, outcome.stderr
if mode == "profile":
    profile.disable()
    stats = pstats.Stats(profile).stats
    groups = {"modules imported during the check": "<frozen importlib._bootstrap>:1165(_find_and_load)",
              "dataclasses made": "dataclasses.py:1219(wrap)",
              "regular expressions compiled": "re/__init__.py:272(_compile)",
              "CEL expressions compiled": "expressions.py:865(compile_expression)",
              "the contract's invariants": "invariants.py:252(check_all)",
              "the store opened": "store/__init__.py:62(open_store)",
              "the verifier run": "verifiers/runner.py:170(run_verifier)"}
    found = {}
    for (path, line, name), (_, _, _, cumulative, _) in stats.items():
        where = f"{path}:{line}({name})"
        for group, suffix in groups.items():
            if where.endswith(suffix):
                found[group] = found.get(group, 0.0) + cumulative
    found["the whole check"] = sum(value[2] for value in stats.values())
    print(repr(found))
else:
    print(repr({"import": imported - start, "check": checked - imported}))
"""


def _group(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "statewise":
        return parts[0]
    return ".".join(parts[:3] if len(parts) > 2 and parts[1] in (
        "integrations", "pipeline", "verifiers", "store", "contract", "commands", "planners") else parts[:2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="statewise-cold-check-") as temporary:
        root = Path(temporary)
        env = {**os.environ, "STATEWISE_CACHE_DIR": str(root / "cache"), "GIT_CONFIG_NOSYSTEM": "1",
               "STATEWISE_RUNTIME_DIR": str(root / "install"), "STATEWISE_NO_WARM": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("STATEWISE_STORE", None)
        work, _ = hook_speed._world(root, "claude-code", env)
        hook_speed._end_worker(root / "install")  # the one `statewise install` started
        payload = root / "push.json"
        payload.write_text(hook_speed._payloads("claude-code", work)["git push origin feature"][2])
        load = os.getloadavg()

        def run(mode: str, *flags: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, *flags, "-c", CHILD, mode, str(payload)], cwd=work, env=env,
                                  capture_output=True, text=True, check=True, timeout=300)

        run("cpu")  # bytecode and the caches, as a session's earlier calls leave them
        cpu = [ast.literal_eval(run("cpu").stdout) for _ in range(options.runs)]
        profiles = [ast.literal_eval(run("profile").stdout) for _ in range(options.runs)]
        imports: list[dict[str, float]] = []
        for _ in range(options.runs):
            sums: dict[str, float] = {}
            for line in run("cpu", "-X", "importtime").stderr.splitlines():
                if line.startswith("import time:") and "self [us]" not in line:
                    self_us, _, name = line.removeprefix("import time:").split("|")
                    sums[_group(name.strip())] = sums.get(_group(name.strip()), 0.0) + int(self_us) / 1000
            imports.append(sums)
    print(f"the first guarded check with no worker (git push origin feature), medians of {options.runs} runs; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (at the end {os.getloadavg()[0]:.2f}); "
          f"Python {sys.version.split()[0]}")
    for name in ("import", "check"):
        print(f"  CPU ms, {name:<38} {statistics.median(run[name] for run in cpu) * 1000:8.1f}")
    print("check under cProfile, cumulative ms (groups overlap):")
    for name in profiles[0]:
        print(f"  {name:<46} {statistics.median(run.get(name, 0.0) for run in profiles) * 1000:8.1f}")
    totals = {name: statistics.median(run.get(name, 0.0) for run in imports) for name in set().union(*imports)}
    print(f"-X importtime self times by package, ms (sum {sum(totals.values()):.1f}; the 20 largest):")
    for name, value in sorted(totals.items(), key=lambda item: -item[1])[:20]:
        print(f"  {name:<46} {value:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
