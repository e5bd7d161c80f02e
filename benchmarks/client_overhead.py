"""What StateWise's hooks add to a real client's own time, for one harmless tool call.

    python benchmarks/client_overhead.py [--runs 5] [--clients claude,codex,gemini] [--floor] [--empty-settings]
        [--unfiltered] [--user-settings]

Each client (the pinned Claude Code, Codex and Gemini CLI the end-to-end tests install) runs
headless against the scripted model server on 127.0.0.1 (tests/e2e/model_server.py): one turn
that calls the shell tool with `git status`, then plain text. Identical workspaces run
interleaved, one without hooks (the baseline) and one with the hooks `statewise install` writes
(SessionStart, the pre-tool guard, the post-tool capture), after one warm-up run each (the
client's first-run work, and the first session of the project); every setting runs once per
round, in an order that reverses from round to round.

Each run is timed twice: its wall time, and the CPU time (user and system) of the client and
every process it waited for (the hooks, the tool). A ratio is the median over the rounds of a
run divided by the baseline's run *in the same round*, so that a slow stretch of the shared
machine moves both sides, printed with a 95 % bootstrap interval of that median. The goal
(at most +15 %) counts as met only when the whole interval of the wall-time ratio is at or
under 1.15. It also prints the load average and how many timed runs with hooks had a hook take
the full path (seen by the cache files the full path rewrites on every call: in a steady state
there should be none, since the hooks of a harmless session are all answered by the front door).

With ``--floor`` another workspace runs in the same rounds with the same settings but a wrapper
that only reads its input and prints ``{}`` (``/bin/sh``, ``cat``): what the client itself costs
to run these hooks, whatever they do. StateWise's own part is the ratio of the hooks to it.

With ``--unfiltered`` another workspace runs with StateWise's hooks as install writes them but
the post-tool filters taken out (Claude Code's ``if`` rules, Codex's and Gemini CLI's shell
pre-filter): one unconditional post-tool hook per event, spawned for ``git status`` too (what
install wrote before the filters).

With ``--empty-settings`` another workspace runs with the settings file the hooks go into but
no hooks in it (``{}``): what the client spends on reading a settings file at all, before any
hook is configured (Claude Code 2.1 builds its settings schema the first time it reads one).

With ``--user-settings`` (Claude Code only) every workspace, the baseline included, has a user
settings file (``~/.claude/settings.json`` with one permission rule), as a developer who has
ever saved a Claude Code setting does: the client's cost of reading settings at all is then in
the baseline, and the ratio is what installing StateWise adds for that developer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clients import CLIENTS, Workspace, installed_clients  # noqa: E402
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


def _children_cpu() -> float:
    """CPU seconds (user and system) of every reaped child so far: the client, and the hooks
    and tools it waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def paired_ratio(numerators: list[float], denominators: list[float], *, draws: int = 2000,
                 seed: int = 0) -> tuple[float, float, float]:
    """The median of the per-round ratios (each run divided by the run of the baseline in the
    same round, so that a slow stretch of the machine moves both) and a 95 % bootstrap interval
    of that median: (median, low, high)."""
    ratios = [a / b for a, b in zip(numerators, denominators, strict=True)]
    pick = random.Random(seed)
    medians = sorted(statistics.median(pick.choices(ratios, k=len(ratios))) for _ in range(draws))
    return statistics.median(ratios), medians[int(0.025 * draws)], medians[int(0.975 * draws) - 1]


def _drop_post_filters(client: str, settings: Path) -> None:
    """Rewrite the post-tool entries as one unconditional hook per event (the layout before the
    filters), keeping everything else as install wrote it."""
    from statewise.integrations.install import AGENTS, post_filter_parts

    data = json.loads(settings.read_text(encoding="utf-8"))
    for event in AGENTS[CLIENTS[client].agent].post_events:
        groups = data["hooks"][event]
        hook = {key: value for key, value in groups[0]["hooks"][0].items() if key != "if"}
        parts = post_filter_parts(hook["command"])
        if parts is not None:
            hook["command"] = parts[0]  # the wrapper call the shell pre-filter stands in front of
        data["hooks"][event] = [{"matcher": groups[0]["matcher"], "hooks": [hook]}]
    settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _spaces(client: str, root: Path, client_bin: Path, options: argparse.Namespace) -> dict[str, Workspace]:
    """setting -> its workspace: ``plain`` (no hooks), ``hooks`` (what install writes) and the
    ones the options ask for. Each is a workspace of its own: installing and uninstalling between
    runs would change the files the session note watches and measure a first session every time."""
    spaces = {name: build_workspace(root / name, client_bin) for name in ("plain", "hooks")}
    spaces["hooks"].install(client)
    if options.floor:
        spaces["empty hooks"] = build_workspace(root / "floor", client_bin)
        spaces["empty hooks"].install(client)
        # The same settings entries (so the same trust in Codex), an empty hook behind them.
        (spaces["empty hooks"].work / ".statewise" / "bin" / "statewise-hook").write_text(
            "#!/bin/sh\ncat >/dev/null\necho '{}'\n", encoding="utf-8")
    if options.unfiltered:
        spaces["unfiltered"] = build_workspace(root / "unfiltered", client_bin)
        spaces["unfiltered"].install(client)
        _drop_post_filters(client, spaces["unfiltered"].work / CLIENTS[client].settings_file)
        if client == "codex":  # a changed command is a hook Codex never reviewed: it would skip it
            spaces["unfiltered"]._trust_codex_hooks(verify=True)
    if options.empty_settings:
        spaces["settings file"] = build_workspace(root / "settings", client_bin)
        bare_file = spaces["settings file"].work / CLIENTS[client].settings_file
        bare_file.parent.mkdir(parents=True, exist_ok=True)
        bare_file.write_text("{}\n", encoding="utf-8")
    if options.user_settings and client == "claude":
        # A developer who already has a user settings file (a model, a permission rule): every
        # workspace, the baseline included, has one, so the client's cost of reading settings at
        # all is in the baseline too.
        for space in spaces.values():
            (space.home / ".claude").mkdir(parents=True, exist_ok=True)
            (space.home / ".claude" / "settings.json").write_text(
                json.dumps({"permissions": {"allow": ["Bash(git status)"]}}) + "\n", encoding="utf-8")
    return spaces


def measure(client: str, client_bin: Path, options: argparse.Namespace) -> dict[str, object]:
    """Time every setting of ``client`` in interleaved rounds; the figures of one client."""
    with tempfile.TemporaryDirectory(prefix=f"statewise-overhead-{client}-") as temporary:
        spaces = _spaces(client, Path(temporary), client_bin, options)
        for space in spaces.values():
            space.run(client, [_step(client)])  # the client's own first-run work, and the first session
        wall: dict[str, list[float]] = {name: [] for name in spaces}
        cpu: dict[str, list[float]] = {name: [] for name in spaces}
        full_path = 0
        cache = spaces["hooks"].home / ".cache" / "statewise"
        names = list(spaces)
        for round_number in range(options.runs):
            for name in names if round_number % 2 == 0 else names[::-1]:
                before, cpu_before = _newest(cache), _children_cpu()
                run = spaces[name].run(client, [_step(client)])
                cpu[name].append(_children_cpu() - cpu_before)
                assert run.returncode == 0, run.describe()
                wall[name].append(run.seconds)
                if name == "hooks" and _newest(cache) > before:
                    full_path += 1
    figures: dict[str, object] = {"full_path_runs": full_path}
    for name in names:
        figures[name] = {"wall_s": statistics.median(wall[name]), "cpu_s": statistics.median(cpu[name])}
        if name != "plain":
            figures[name]["wall_ratio"] = paired_ratio(wall[name], wall["plain"])
            figures[name]["cpu_ratio"] = paired_ratio(cpu[name], cpu["plain"])
    if "empty hooks" in wall:
        figures["hooks / empty hooks"] = paired_ratio(wall["hooks"], wall["empty hooks"])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds; every setting runs once per round")
    parser.add_argument("--clients", default="claude,codex,gemini")
    parser.add_argument("--floor", action="store_true", help="also time empty hooks (the client's own hook cost)")
    parser.add_argument("--unfiltered", action="store_true",
                        help="also time StateWise's hooks with the post-tool filters taken out (Claude Code's "
                             "`if` rules, the others' shell pre-filter: one unconditional post-tool hook per event, "
                             "what install wrote before)")
    parser.add_argument("--empty-settings", action="store_true",
                        help="also time the settings file with no hooks in it (the client's cost of reading it)")
    parser.add_argument("--user-settings", action="store_true",
                        help="Claude Code: give every workspace, the baseline too, a user settings file "
                             "(~/.claude/settings.json with one permission rule), as most developers have")
    options = parser.parse_args(argv)
    client_bin = installed_clients()
    results = {client: measure(client, client_bin, options) for client in options.clients.split(",")}
    load = os.getloadavg()
    print(f"one harmless tool call (git status), {options.runs} interleaved rounds, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("ratio = median over the rounds of (run / the baseline's run in the same round), [95 % bootstrap interval]")
    print(f"{'client':7} {'setting':14} {'wall s':>7} {'wall ratio':>22} {'cpu s':>6} {'cpu ratio':>22}")
    failed = 0
    for client, figures in results.items():
        for name, row in figures.items():
            if not isinstance(row, dict):
                continue
            text = f"{client:7} {name:14} {row['wall_s']:7.3f} "
            if "wall_ratio" in row:
                ratio, low, high = row["wall_ratio"]
                cpu_ratio, cpu_low, cpu_high = row["cpu_ratio"]
                text += f"{ratio:6.3f} [{low:.3f}, {high:.3f}] {row['cpu_s']:6.3f} " \
                        f"{cpu_ratio:6.3f} [{cpu_low:.3f}, {cpu_high:.3f}]"
            else:
                text += f"{'(baseline)':>22} {row['cpu_s']:6.3f}"
            print(text)
    for client, figures in results.items():
        ratio, low, high = figures["hooks"]["wall_ratio"]  # type: ignore[index]
        met = high <= 1.15
        failed += not met
        verdict = "met (the whole interval)" if met else "NOT met" if low > 1.15 else \
            "not shown (the interval reaches past 1.15)"
        print(f"ratio: {client} with hooks / without = {ratio:.3f} [{low:.3f}, {high:.3f}]; goal <= 1.15 {verdict}; "
              f"{figures['full_path_runs']} of {options.runs} runs had a hook take the full path")
        if "hooks / empty hooks" in figures:
            ratio, low, high = figures["hooks / empty hooks"]  # type: ignore[misc]
            print(f"floor: {client} StateWise's hooks / empty hooks = {ratio:.3f} [{low:.3f}, {high:.3f}]")
    print(json.dumps(results))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
