"""What reading inside a recipe, a script or an inline program costs the analyzer, in one process.

    python benchmarks/inside_speed.py [--iterations 200]

Builds the files of ``hook_speed.py``'s ``recipe`` cases (a Makefile, a package.json script, a
workspace shell script) in a fresh git repository and times ``analyze_command`` on each command
(median of ``--iterations`` runs after one warm-up, ms). Run it with ``PYTHONPATH=<an older
checkout's src>`` for the figures without the reading; docs/performance-hook.md has both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from statewise.commands import analyze_command

COMMANDS = ["make lint", "npm run lint", "bash scripts/check.sh",
            "python3 -c 'import subprocess; subprocess.run([\"git\", \"status\"])'", "git status"]


def _world(root: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "Makefile").write_text(".PHONY: lint\nSRC := src\nlint:\n\tpython3 -m compileall -q $(SRC)\n"
                                   "\tgrep -rn TODO $(SRC) || true\n")
    (root / "package.json").write_text(json.dumps({"name": "bench", "private": True,
                                                   "scripts": {"lint": "eslint src && prettier --check src"}}))
    (root / "scripts").mkdir()
    (root / "scripts" / "check.sh").write_text("#!/bin/sh\nset -e\ncd src\nls -la\ngrep -rn hello . || true\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=200)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="statewise-inside-speed-") as temporary:
        root = Path(temporary)
        _world(root)
        for command in COMMANDS:
            analyze_command(command, cwd=root, workspace=root)
        print(f"analyze_command, median of {options.iterations} runs (ms)")
        for command in COMMANDS:
            times = []
            for _ in range(options.iterations):
                started = time.perf_counter()
                analyze_command(command, cwd=root, workspace=root)
                times.append((time.perf_counter() - started) * 1000)
            print(f"{command[:44]:46} {statistics.median(times):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
