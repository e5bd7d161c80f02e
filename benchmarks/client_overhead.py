"""What StateWise's hooks add to a real client's own time, for one harmless tool call.

    python benchmarks/client_overhead.py [--runs 5] [--clients claude,codex,gemini] [--floor] [--empty-settings]
        [--unfiltered]

Each client (the pinned Claude Code, Codex and Gemini CLI the end-to-end tests install) runs
headless against the scripted model server on 127.0.0.1 (tests/e2e/model_server.py): one turn
that calls the shell tool with `git status`, then plain text. Two identical workspaces run
interleaved, one without hooks and one with the hooks `statewise install` writes (SessionStart,
the pre-tool guard, the post-tool capture), after one warm-up run each (the client's first-run
work, and the first session of the project), and the medians are compared; the order of the
two alternates from round to round. Prints the median wall time of each, the difference, the
ratio (the goal is at most +15 %), the load average, and how many timed runs with hooks had a
hook take the full path (seen by the cache files the full path rewrites on every call: in a
steady state there should be none, since the three hooks of a harmless session are all
answered by the front door).

With ``--floor`` a third workspace runs in the same rounds with the same settings but a wrapper
that only reads its input and prints ``{}`` (``/bin/sh``, ``cat``): what the client itself costs
to run three hooks, whatever they do. StateWise's own part is the difference between the hooks
and the floor.

With ``--unfiltered`` (Claude Code only) another workspace runs in the same rounds with
StateWise's hooks as install writes them but the post-tool ``if`` filters taken out: one
unconditional post-tool hook per event, spawned for ``git status`` too (what install wrote
before the filters).

With ``--empty-settings`` another workspace runs in the same rounds with the settings file the
hooks go into but no hooks in it (``{}``): what the client spends on reading a project settings
file at all (Claude Code 2.1 takes about 30 ms longer with an empty ``.claude/settings.json``
than with none), before any hook is configured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clients import CLIENTS, installed_clients  # noqa: E402
from tests.e2e.conftest import build_workspace  # noqa: E402
from tests.e2e.model_server import Step  # noqa: E402

SHELL_TOOL = {"claude": "Bash", "codex": "exec_command", "gemini": "run_shell_command"}


def _step(client: str) -> Step:
    key = "cmd" if client == "codex" else "command"
    return Step(SHELL_TOOL[client], {key: "git status"})


def _newest(folder: Path) -> int:
    """The newest modification time (ns) of any file under ``folder``, 0 when there is none."""
    newest = 0
    for directory, _, files in os.walk(folder):
        for name in files:
            try:
                newest = max(newest, os.stat(os.path.join(directory, name)).st_mtime_ns)
            except OSError:
                pass
    return newest


def _drop_post_filters(settings: Path) -> None:
    """Rewrite Claude Code's post-tool entries as one unconditional hook per event (the layout
    before the ``if`` filters), keeping everything else as install wrote it."""
    data = json.loads(settings.read_text(encoding="utf-8"))
    for event in ("PostToolUse", "PostToolUseFailure"):
        groups = data["hooks"][event]
        hook = {key: value for key, value in groups[0]["hooks"][0].items() if key != "if"}
        data["hooks"][event] = [{"matcher": groups[0]["matcher"], "hooks": [hook]}]
    settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clients", default="claude,codex,gemini")
    parser.add_argument("--floor", action="store_true", help="also time empty hooks (the client's own hook cost)")
    parser.add_argument("--unfiltered", action="store_true",
                        help="also time StateWise's hooks with Claude Code's post-tool `if` filters taken out "
                             "(one unconditional post-tool hook per event, what install wrote before)")
    parser.add_argument("--empty-settings", action="store_true",
                        help="also time the settings file with no hooks in it (the client's cost of reading it)")
    options = parser.parse_args(argv)
    client_bin = installed_clients()
    rows = []
    floors: dict[str, float] = {}
    settings_only: dict[str, float] = {}
    unfiltered_s: dict[str, float] = {}
    for client in options.clients.split(","):
        with tempfile.TemporaryDirectory(prefix=f"statewise-overhead-{client}-") as temporary:
            # Two identical workspaces, one with the hooks: installing and uninstalling between
            # runs would change the files the session note watches and measure a first session
            # every time.
            plain_space = build_workspace(Path(temporary) / "plain", client_bin)
            hooked_space = build_workspace(Path(temporary) / "hooked", client_bin)
            hooked_space.install(client)
            spaces = [plain_space, hooked_space]
            if options.floor:
                floor_space = build_workspace(Path(temporary) / "floor", client_bin)
                floor_space.install(client)
                # The same settings entries (so the same trust in Codex), an empty hook behind them.
                (floor_space.work / ".statewise" / "bin" / "statewise-hook").write_text(
                    "#!/bin/sh\ncat >/dev/null\necho '{}'\n", encoding="utf-8")
                spaces.append(floor_space)
            unfiltered_space = None
            if options.unfiltered and client == "claude":
                unfiltered_space = build_workspace(Path(temporary) / "unfiltered", client_bin)
                unfiltered_space.install(client)
                _drop_post_filters(unfiltered_space.work / CLIENTS[client].settings_file)
                spaces.append(unfiltered_space)
            if options.empty_settings:
                bare_space = build_workspace(Path(temporary) / "settings", client_bin)
                bare_file = bare_space.work / CLIENTS[client].settings_file
                bare_file.parent.mkdir(parents=True, exist_ok=True)
                bare_file.write_text("{}\n", encoding="utf-8")
                spaces.append(bare_space)
            for space in spaces:
                space.run(client, [_step(client)])  # the client's own first-run work, and the first session
            plain, hooked, empty, bare, unfiltered = [], [], [], [], []
            full_path = 0
            cache = hooked_space.home / ".cache" / "statewise"
            for round_number in range(options.runs):
                order = [(plain_space, plain), (hooked_space, hooked)]
                if options.floor:
                    order.append((floor_space, empty))
                if unfiltered_space is not None:
                    order.append((unfiltered_space, unfiltered))
                if options.empty_settings:
                    order.append((bare_space, bare))
                for space, times in order if round_number % 2 == 0 else order[::-1]:
                    before = _newest(cache)
                    run = space.run(client, [_step(client)])
                    assert run.returncode == 0, run.describe()
                    times.append(run.seconds)
                    if space is hooked_space and _newest(cache) > before:
                        full_path += 1
        rows.append((client, statistics.median(plain), statistics.median(hooked), full_path))
        if empty:
            floors[client] = statistics.median(empty)
        if bare:
            settings_only[client] = statistics.median(bare)
        if unfiltered:
            unfiltered_s[client] = statistics.median(unfiltered)
    load = os.getloadavg()
    print(f"one harmless tool call (git status), median of {options.runs} interleaved runs per setting, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'client':8} {'no hooks s':>11} {'hooks s':>9} {'added s':>8} {'ratio':>6}  goal <= 1.15  "
          "runs with a full-path hook")
    failed = 0
    for client, plain_s, hooked_s, full_path in rows:
        ratio = hooked_s / plain_s
        failed += ratio > 1.15
        print(f"{client:8} {plain_s:11.2f} {hooked_s:9.2f} {hooked_s - plain_s:8.2f} {ratio:6.2f}  "
              f"{'yes' if ratio <= 1.15 else 'NO ':12} {full_path} of {options.runs}")
    for client, plain_s, hooked_s, _ in rows:
        print(f"ratio: {client} with hooks / without = {hooked_s / plain_s:.2f}")
    for client, plain_s, hooked_s, _ in rows:
        if client in floors:
            floor = floors[client]
            print(f"floor: {client} with empty hooks {floor:.2f} s, / without = {floor / plain_s:.2f}; "
                  f"StateWise's hooks / empty hooks = {hooked_s / floor:.2f}")
    for client, plain_s, hooked_s, _ in rows:
        if client in settings_only:
            bare_s = settings_only[client]
            print(f"settings: {client} with a settings file and no hooks {bare_s:.2f} s, / without = "
                  f"{bare_s / plain_s:.2f}; with hooks / settings file alone = {hooked_s / bare_s:.2f}")
    for client, plain_s, hooked_s, _ in rows:
        if client in unfiltered_s:
            other = unfiltered_s[client]
            print(f"unfiltered: {client} with unconditional post-tool hooks {other:.2f} s, / without = "
                  f"{other / plain_s:.2f}; filtered / unfiltered = {hooked_s / other:.2f}")
    print(json.dumps({client: {"plain_s": p, "hooks_s": h, "full_path_runs": f, "empty_hooks_s": floors.get(client),
                               "settings_only_s": settings_only.get(client),
                               "unfiltered_hooks_s": unfiltered_s.get(client)}
                      for client, p, h, f in rows}))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
