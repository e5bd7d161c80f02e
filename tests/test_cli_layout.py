"""What the help and the demo look like: at 80 columns, and from an installed package."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from click.testing import CliRunner

from statewise.cli import main


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
    return {**env, **extra}


def test_the_demo_holds_its_aligned_layout_at_80_columns(tmp_path):
    done = subprocess.run([sys.executable, "-m", "statewise", "demo"], capture_output=True, text=True, timeout=180,
                          cwd=tmp_path, env=_env(COLUMNS="80"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    labelled = [i for i, line in enumerate(lines) if re.match(r"[a-z]+: {2,}\S", line)]
    assert len(labelled) >= 10
    # A value too long for one line goes on under its own first column, not under the label.
    column = lines[labelled[0]].index(lines[labelled[0]].split(":", 1)[1].strip())
    wrapped = [line for line in lines[labelled[0]:] if line.startswith(" ") and not line.startswith("    └")]
    assert wrapped and all(line[:column].strip() == "" and line[column] != " " for line in wrapped[:5])
    store = subprocess.run([sys.executable, "-m", "statewise", "demo", "store"], capture_output=True, text=True,
                           timeout=180, cwd=tmp_path, env=_env(COLUMNS="80"))
    assert store.returncode == 0, store.stderr
    assert max(len(line) for line in store.stdout.splitlines()) <= 80


def test_bench_help_names_the_cases_the_installed_package_uses(tmp_path, monkeypatch):
    from statewise.bench.runner import default_cases_dir

    # Where no ./benchmarks/cases and no STATEWISE_BENCH_CASES say otherwise, the help names
    # the folder the run would use: the wheel's statewise/bench/cases, or a checkout's own.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STATEWISE_BENCH_CASES", raising=False)
    result = CliRunner().invoke(main, ["bench", "--help"], terminal_width=80)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "$STATEWISE_BENCH_CASES, else ./benchmarks/cases when it exists" in text
    # click may break a long path across lines: compare without whitespace.
    assert "".join(f"installed with StateWise: {default_cases_dir()})".split()) in "".join(text.split())
