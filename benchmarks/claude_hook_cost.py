"""What Claude Code itself spends on a settings file and on each hook, and what ``async`` changes.

    python benchmarks/claude_hook_cost.py [--runs 15] [--variants none,settings,pre,...] [--async-capture 3]

The pinned Claude Code (the one the end-to-end tests install) runs headless against the
scripted model server on 127.0.0.1, one turn calling Bash with ``git status``, in one workspace
per variant, interleaved round by round (the order reversing every other round) after one
warm-up run each. Every hook is the same empty program (``/bin/sh`` reading its input and
printing ``{}``), so the figures are the client's own cost, whatever a hook does:

- ``none``: no ``.claude/settings.json`` at all (the baseline);
- ``settings``: ``.claude/settings.json`` holding ``{}``;
- ``user-settings``: ``~/.claude/settings.json`` holding ``{}`` instead;
- ``pre``: one PreToolUse hook (matcher ``Bash``);
- ``pre-nomatch``: one PreToolUse hook whose matcher (``Write``) the call does not match;
- ``pre-post``: PreToolUse and PostToolUse;
- ``three``: SessionStart, PreToolUse, PostToolUse and PostToolUseFailure, as
  ``statewise install claude-code`` lays them out;
- ``three-async-post``: the same with ``"async": true`` on both post-tool hooks.

It prints the median, the ratio to the first variant and the fastest run of each.

``--async-capture N`` instead installs StateWise's real hooks (``statewise install
claude-code``), sets ``"async": true`` on its post-tool hooks, and in N fresh workspaces runs
one session whose *last* tool call is a command StateWise captures (``python3 --version``, which
succeeds, and ``npm run check``, whose script calls a missing one): it prints whether the
capture was in the store when ``claude -p`` had exited. ``--async-capture-option asyncRewake``
tries that option instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clients import Workspace, installed_clients  # noqa: E402
from tests.e2e.conftest import build_workspace  # noqa: E402
from tests.e2e.model_server import Step  # noqa: E402

from statewise.sandbox import git  # noqa: E402

EMPTY_HOOK = "#!/bin/sh\ncat >/dev/null\necho '{}'\n"
VARIANTS = ("none", "settings", "user-settings", "pre", "pre-nomatch", "pre-post", "three", "three-async-post")


def _hook(command: str, **options: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": 30, **options}


def _settings(variant: str, command: str) -> dict[str, Any] | None:
    """The project settings for ``variant``, None for no file."""
    if variant in ("none", "user-settings"):
        return None
    if variant == "settings":
        return {}
    pre = [{"matcher": "Write" if variant == "pre-nomatch" else "Bash", "hooks": [_hook(command)]}]
    hooks: dict[str, Any] = {"PreToolUse": pre}
    if variant in ("pre-post", "three", "three-async-post"):
        options = {"async": True} if variant == "three-async-post" else {}
        hooks["PostToolUse"] = [{"matcher": "Bash", "hooks": [_hook(command, **options)]}]
        if variant != "pre-post":
            hooks["PostToolUseFailure"] = [{"matcher": "Bash", "hooks": [_hook(command, **options)]}]
            hooks["SessionStart"] = [{"hooks": [_hook(command)]}]
    return {"hooks": hooks}


def _variant_space(root: Path, variant: str, client_bin: Path) -> Workspace:
    space = build_workspace(root / variant, client_bin)
    program = space.work / ".statewise" / "bin" / "empty-hook"
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(EMPTY_HOOK, encoding="utf-8")
    program.chmod(0o755)
    if variant == "user-settings":
        (space.home / ".claude").mkdir(parents=True, exist_ok=True)
        (space.home / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    settings = _settings(variant, str(program))
    if settings is not None:
        (space.work / ".claude").mkdir(exist_ok=True)
        (space.work / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return space


def time_variants(variants: list[str], runs: int) -> None:
    client_bin = installed_clients()
    step = [Step("Bash", {"command": "git status"})]
    with tempfile.TemporaryDirectory(prefix="statewise-claude-hooks-") as temporary:
        spaces = {variant: _variant_space(Path(temporary), variant, client_bin) for variant in variants}
        for space in spaces.values():
            space.run("claude", step)  # the first run's own work
        times: dict[str, list[float]] = {variant: [] for variant in variants}
        for round_number in range(runs):
            for variant in variants if round_number % 2 == 0 else variants[::-1]:
                run = spaces[variant].run("claude", step)
                assert run.returncode == 0, run.describe()
                times[variant].append(run.seconds)
    load = os.getloadavg()
    base = statistics.median(times[variants[0]])
    print(f"Claude Code, one harmless Bash call, median of {runs} interleaved runs per variant, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'variant':18} {'median s':>9} {'ratio':>6} {'fastest s':>10}")
    for variant in variants:
        median = statistics.median(times[variant])
        print(f"{variant:18} {median:9.3f} {median / base:6.3f} {min(times[variant]):10.3f}")


def async_capture(trials: int, option: str) -> None:
    client_bin = installed_clients()
    commands = (("python3 --version", "runtime.python_version", "workspace"),
                ("npm run check", "npm.script_exists[lint]", "repo"))
    captured = {command: 0 for command, _, _ in commands}
    with tempfile.TemporaryDirectory(prefix="statewise-async-capture-") as temporary:
        for trial in range(trials):
            space = build_workspace(Path(temporary) / f"trial{trial}", client_bin)
            manifest = {"name": "app", "version": "1.0.0", "scripts": {"test": "echo ok", "check": "npm run lint"}}
            (space.work / "package.json").write_text(json.dumps(manifest) + "\n", encoding="utf-8")
            git(space.work, "commit", "--quiet", "-am", "a check script")
            settings = space.install("claude")
            data = json.loads(settings.read_text(encoding="utf-8"))
            for event in ("PostToolUse", "PostToolUseFailure"):
                for group in data["hooks"][event]:
                    for hook in group["hooks"]:
                        hook[option] = True
            settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
            for command, key, kind in commands:
                run = space.run("claude", [Step("Bash", {"command": command})])  # the session's last call
                assert run.returncode == 0, run.describe()
                scope = f"workspace:{space.work.resolve()}" if kind == "workspace" else f"repo:{space.repo}"
                history = space.statewise_json("record", "history", key, "--scope", scope)
                captured[command] += bool(history)
                print(f"trial {trial}: {command!r} as the last call, {run.seconds:.2f} s: "
                      f"{'captured' if history else 'NOT captured'}")
    for command, count in captured.items():
        print(f"{option}: true on the post-tool hooks: {command!r} captured in {count} of {trials} sessions")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--async-capture", type=int, default=0, metavar="N",
                        help="check in N sessions whether async post-tool hooks still capture the last call")
    parser.add_argument("--async-capture-option", default="async", choices=("async", "asyncRewake"))
    options = parser.parse_args(argv)
    if options.async_capture:
        async_capture(options.async_capture, options.async_capture_option)
        return 0
    variants = options.variants.split(",")
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants: {', '.join(unknown)}")
    time_variants(variants, options.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
