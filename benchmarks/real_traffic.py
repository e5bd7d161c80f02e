"""Real agent traffic through the installed hook: how much ordinary work is stopped.

Every command of the real-traffic corpus (``benchmarks/traffic/extract.py`` builds it from
public coding-agent trajectories) is sent to the hook ``statewise install claude-code`` wrote,
exactly as Claude Code calls it: ``/bin/sh -c <the command from .claude/settings.json>`` with
the PreToolUse JSON of a Bash call on stdin, in a realistic mixed Python + Node repository
(``benchmarks/traffic/project.yaml``: a protected ``main`` on a real bare origin that refuses
pushes to it, a Python package with tests, ``pyproject.toml`` and ``requirements.txt``,
``package.json`` with scripts, ``.env``, ``migrations/``, a real ``.venv``, a ``Makefile``, and
the store records a user would have). Nothing in the corpus is executed: the hook only decides.

The hand labels (``benchmarks/traffic/labels.yaml``, by sha256 of the command) say which
commands a developer would want stopped or asked (``dangerous``); every other command is
``ordinary``. Reported: the share of ordinary commands stopped (denied or asked; goal at most
0.5%), every stop grouped by its cause (the hook's reason, with the command's own words taken
out), the share of dangerous commands stopped, and the run time.

``--census`` prints the 100 most frequent programs and program + subcommand pairs of the corpus
and whether StateWise's built-in contract covers each (a built-in reader or a ``commands:``
rule), without running the hook. ``--ccsn`` also sends every command to cc-safety-net (the npm
package, installed into a cache folder by this script) as its Claude Code hook, and reports
side by side what each stops that the other lets through.

Usage::

    python benchmarks/real_traffic.py [--corpus FILE] [--labels FILE] [--jobs 2] [--limit N]
                                      [--ccsn [--ccsn-hook]] [--census] [--json OUT] [--no-warm]
    python benchmarks/real_traffic.py --report OUT   # an earlier run again, with the current labels

The hook's warm worker is on, as a user has it (``--no-warm``: every call checks in its own
process).

A command that names test paths (``pytest tests/test_x.py``) names files of the agent's own
repository. ``traffic/test_paths.yaml`` (built by ``traffic/test_paths.py`` from each command's
output in the trajectory) says which of them existed where the agent ran it: those are created
in the benchmark repository before the command is sent and removed after, so the hook sees what
it would have seen; a path that did not exist, or of which there is no evidence, is not
created, and a stop on it is counted like any other. These commands are sent in a repository
of their own, whose store is put back as it was before each of them and which has no warm
worker, so that what the hook observed about one command's paths (``fs.exists`` is kept ten
minutes) cannot answer for another's.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(BENCHMARKS / "traffic"))

from extract import DEFAULT_OUT, REPO_MARK, read_corpus  # noqa: E402
from ordinary_work import Repo, build_repo, seed_store  # noqa: E402
from test_paths import (  # noqa: E402
    DEFAULT_EVIDENCE,
    load_databases,
    load_evidence,
    migrate_folders,
    named_test_paths,
    path_key,
)
from traffic_census import census_tables  # noqa: E402

TRAFFIC = BENCHMARKS / "traffic"
CCSN_PACKAGE = "cc-safety-net"
CCSN_VERSION = "2.4.5"
STOPS = ("deny", "ask")
GOAL_ORDINARY_STOPPED = 0.005


@dataclass(frozen=True)
class Outcome:
    """What one guard answered for one corpus command."""

    sha256: str
    label: str  # ordinary or dangerous
    verdict: str  # allow, deny or ask
    reason: str
    seconds: float
    guard: str = "statewise"
    raw: str = ""  # the whole reason, the repository's path written <repo>


def load_labels(path: Path) -> dict[str, dict[str, str]]:
    """sha256 -> {label, reason}; a command without an entry is ordinary."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    labels: dict[str, dict[str, str]] = {}
    for key, entry in (data.get("labels") or {}).items():
        if not re.fullmatch(r"[0-9a-f]{64}", str(key)):
            raise ValueError(f"labels.yaml: {key!r} is not a sha256")
        if entry.get("label") not in ("ordinary", "dangerous") or not entry.get("reason"):
            raise ValueError(f"labels.yaml: {key} needs label ordinary|dangerous and a reason")
        labels[str(key)] = {"label": entry["label"], "reason": str(entry["reason"])}
    return labels


# --- the repository and the installed hook ----------------------------------------------------


def _statewise(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "statewise", *argv], cwd=cwd, env=dict(env), check=True,
                   capture_output=True, timeout=120)


@dataclass
class PathsWorld:
    """The repository test-path commands are sent in: its store as it was made, put back before
    each command, and the paths evidence says existed created for the command only."""

    repo: Repo
    hook: str
    store: bytes
    lock: threading.Lock

    def reset(self) -> None:
        store = Path(self.repo.store)
        for extra in (store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")):
            extra.unlink(missing_ok=True)
        store.write_bytes(self.store)

    def create(self, paths: Sequence[str], texts: Mapping[str, str] | None = None) -> list[Path]:
        """Create each workspace-relative path (a file with a line of text when it has a suffix,
        else a directory; ``texts`` gives some files' text); returns what to remove after (the
        topmost new file or folder)."""
        made: list[Path] = []
        root = self.repo.workspace
        texts = texts or {}
        for path in [*paths, *texts]:
            target = (root / path).resolve()
            if root.resolve() not in target.parents or target.exists():
                continue
            top = target
            while not top.parent.exists():
                top = top.parent
            if target.suffix:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(texts.get(path, "# present in the agent's repository when it ran this command\n"))
            else:
                target.mkdir(parents=True)
            made.append(top)
        return made


def evidence_paths(command: str, workspace: Path, states: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The test paths ``command`` names that existed where the agent ran it, and the others."""
    named = named_test_paths(command, workspace)
    existed = [path for path in named if states.get(path_key(path)) == "existed"]
    return existed, [path for path in named if path not in existed]


#: The Django project the replay makes where an agent migrated one whose database the trajectory
#: shows was SQLite (test_paths.yaml's django_databases): the replay's own minimal files.
REPLAY_MANAGE = ("import os\nimport sys\n\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'replay_settings')\n"
                 "from django.core.management import execute_from_command_line\n\n"
                 "execute_from_command_line(sys.argv)\n")
REPLAY_SETTINGS = ("DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': 'db.sqlite3'}}\n"
                   "INSTALLED_APPS = []\nSECRET_KEY = 'replay'\n")


def django_files(command: str, workspace: Path) -> dict[str, str]:
    """manage.py and its settings in each folder ``command`` migrates in (workspace-relative)."""
    files: dict[str, str] = {}
    for folder in migrate_folders(command, workspace):
        files[os.path.normpath(os.path.join(folder, "manage.py"))] = REPLAY_MANAGE
        files[os.path.normpath(os.path.join(folder, "replay_settings.py"))] = REPLAY_SETTINGS
    return files


def make_world(base: Path, template: Mapping[str, Any], env: Mapping[str, str]) -> tuple[Repo, str]:
    """The mixed repository with StateWise initialised, installed for Claude Code and its store
    seeded; returns it and the PreToolUse command the install wrote into .claude/settings.json."""
    repo = build_repo(base, "inventory", template)
    _statewise(["init"], repo.workspace, env)
    _statewise(["install", "claude-code"], repo.workspace, env)
    store = repo.workspace / ".statewise" / "store.db"
    repo = Repo(workspace=repo.workspace, origin=repo.origin, store=str(store), env=repo.env)
    seed_store(repo, template.get("store", []))
    settings = json.loads((repo.workspace / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][-1]["hooks"][0]["command"]
    return repo, command


def payload(workspace: Path, command: str) -> str:
    """The JSON Claude Code sends before its Bash tool runs ``command``."""
    return json.dumps({"session_id": "real-traffic", "transcript_path": "/dev/null", "cwd": str(workspace),
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "agent command"},
                       "tool_use_id": "toolu_real_traffic"})


def read_answer(returncode: int, stdout: str, stderr: str) -> tuple[str, str]:
    """allow, deny or ask and the reason, as Claude Code reads a PreToolUse hook's answer
    (exit status 2 blocks the call with stderr as the reason)."""
    if returncode == 2:
        return "deny", stderr.strip()
    if returncode != 0:
        return "allow", f"hook error (exit {returncode}, Claude Code goes on): {stderr.strip()[:200]}"
    try:
        data = json.loads(stdout or "{}")
    except json.JSONDecodeError:
        return "allow", f"not JSON: {stdout[:200]}"
    output = data.get("hookSpecificOutput", {}) if isinstance(data, dict) else {}
    decision = output.get("permissionDecision")
    if decision in STOPS:
        return decision, str(output.get("permissionDecisionReason", ""))
    return "allow", ""


def call(argv: Sequence[str], stdin: str, cwd: Path, env: Mapping[str, str]) -> tuple[str, str, float]:
    started = time.perf_counter()
    done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, cwd=cwd, env=dict(env),
                          timeout=120)
    seconds = time.perf_counter() - started
    verdict, reason = read_answer(done.returncode, done.stdout, done.stderr)
    return verdict, reason, seconds


# --- cc-safety-net ----------------------------------------------------------------------------


def install_ccsn(cache: Path, version: str = CCSN_VERSION) -> Path:
    """cc-safety-net from npm into ``cache`` (once); returns the package's folder."""
    package = cache / "node_modules" / CCSN_PACKAGE
    installed = package / "package.json"
    if not (installed.exists() and json.loads(installed.read_text()).get("version") == version):
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--no-save",
                        f"{CCSN_PACKAGE}@{version}"], check=True, capture_output=True, timeout=600)
    return package


#: One node process for the whole corpus: each line of stdin is {command, cwd}; each line of
#: stdout is what cc-safety-net's public ``checkCommand`` (package export ``./api``, the analysis
#: its hook runs on a Bash call) answers. Spawning its hook once per command costs a node start
#: each; ``--ccsn-hook`` does that instead, as a check that both give the same verdicts.
_CCSN_BATCH = """\
import { createInterface } from 'node:readline';
const api = await import(process.argv[2]);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { command, cwd } = JSON.parse(line);
  let result;
  try { result = api.checkCommand({ command, cwd }); }
  catch (error) { result = { kind: 'error', reason: String(error) }; }
  process.stdout.write(JSON.stringify(result) + '\\n');
}
"""


def ccsn_batch(package: Path, calls: Sequence[tuple[str, Path]], env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(verdict, rule or reason) of cc-safety-net for each (command, cwd), in one node process."""
    script = package.parent.parent / "statewise-ccsn-batch.mjs"
    script.write_text(_CCSN_BATCH)
    request = "".join(json.dumps({"command": command, "cwd": str(cwd)}) + "\n" for command, cwd in calls)
    done = subprocess.run(["node", str(script), str(package / "dist" / "api.js")], input=request, text=True,
                          capture_output=True, env=dict(env), check=True, timeout=3600)
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(answers) != len(calls):
        raise RuntimeError(f"cc-safety-net answered {len(answers)} of {len(calls)} commands: {done.stderr[:500]}")
    return [("deny" if a.get("kind") == "deny" else "allow" if a.get("kind") == "allow" else "error",
             str(a.get("ruleId") or a.get("reason", ""))) for a in answers]


# --- grouping the stops -----------------------------------------------------------------------


def cause(reason: str, workspace: Path, command: str) -> str:
    """The reason with what is particular to one command taken out (its text, quoted words,
    paths, numbers), so that stops for the same cause group together."""
    text = reason.replace(str(workspace), "<repo>").replace(command, "<command>")
    # "stopped pip.install numpy (package=..., ...): invariant:..." -> one group for every package
    text = re.sub(r"stopped (\S+) [^(:]*\([^)]*\):", r"stopped \1 (…):", text)
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"'[^'\n]*'", "'…'", text)
    text = re.sub(r'"[^"\n]*"', '"…"', text)
    text = re.sub(r"(?<![\w.])/[\w./@+-]+", "<path>", text)
    text = re.sub(r"\b\d+\b", "N", text)
    text = re.sub(r"^StateWise:?\s*", "", text)
    # What to run to record an answer, and the advice after it, are the same for every command.
    text = re.split(r"(?: Record it with| To record| Run: | run: |\n)", text, maxsplit=1)[0]
    return " ".join(text.split())[:220]


# --- the run ----------------------------------------------------------------------------------


def run(entries: Sequence[Mapping[str, Any]], labels: Mapping[str, Mapping[str, str]], *, jobs: int = 2,
        ccsn: bool = False, ccsn_cache: Path | None = None, ccsn_hook: bool = False, warm: bool = True,
        keep: bool = False, progress: bool = False, evidence: Mapping[str, Mapping[str, str]] | None = None,
        created: Counter[str] | None = None, databases: Mapping[str, str] | None = None,
        ) -> tuple[list[Outcome], dict[str, str], Path]:
    """Every entry through the installed hook (and cc-safety-net when asked), ``jobs`` calls at a
    time, each call in a repository no other call is using, so that no two calls share a store.
    Commands ``evidence`` (test_paths.yaml) names go through the repository of test paths
    (``PathsWorld``), and so do the Django migrations ``databases`` names; ``created`` counts
    the paths created and not, and the Django projects made. Returns the outcomes, the
    command text by sha256 (for the local report only) and the first repository's path."""
    template = yaml.safe_load((TRAFFIC / "project.yaml").read_text())
    base = Path(tempfile.mkdtemp(prefix="statewise-traffic-"))
    env = {**os.environ, "STATEWISE_CACHE_DIR": str(base / "cache"), "STATEWISE_RUNTIME_DIR": str(base / "warm"),
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(base / "home")}
    env.pop("STATEWISE_STORE", None)
    env.pop("VIRTUAL_ENV", None)
    if not warm:
        env["STATEWISE_NO_WARM"] = "1"  # no worker process beside the `jobs` hook calls
    (base / "home").mkdir()
    worlds = [make_world(base / f"world-{index}", template, env) for index in range(max(1, jobs))]
    free: queue.Queue[int] = queue.Queue()
    for index in range(len(worlds)):
        free.put(index)
    evidence = evidence or {}
    databases = databases or {}
    created = created if created is not None else Counter()
    paths_world: PathsWorld | None = None

    def replayed(sha: str) -> bool:
        return sha in evidence or sha in databases

    if any(replayed(entry["sha256"]) for entry in entries):
        cold = {**env, "STATEWISE_NO_WARM": "1"}
        repo, hook = make_world(base / "world-paths", template, cold)
        paths_world = PathsWorld(repo, hook, Path(repo.store).read_bytes(), threading.Lock())
    package = install_ccsn(ccsn_cache or base / "ccsn") if ccsn else None
    ccsn_home = str(base / "ccsn-home")
    ccsn_env = {**env, "CC_SAFETY_NET_HOME": ccsn_home, "CC_SAFETY_NET_AUDIT_HOME": ccsn_home,
                "CC_SAFETY_NET_AUDIT_SCOPE": "blocked"}
    texts: dict[str, str] = {}

    def world(index: int) -> Repo:
        return worlds[index % len(worlds)][0]

    def send(repo: Repo, hook: str, command: str, sha: str) -> tuple[str, str, float]:
        if paths_world is None or not replayed(sha):
            return call(["/bin/sh", "-c", hook], payload(repo.workspace, command), repo.workspace,
                        {**env, **repo.env})
        with paths_world.lock:
            paths_world.reset()
            existed, others = evidence_paths(command, repo.workspace, evidence[sha]) if sha in evidence else ([], [])
            texts = django_files(command, repo.workspace) if databases.get(sha) == "sqlite3" else {}
            made = paths_world.create(existed, texts)
            created["created"] += len(existed)
            created["not created"] += len(others)
            created["django projects"] += len(texts) // 2
            created["django unknown"] += sha in databases and not texts
            try:
                return call(["/bin/sh", "-c", hook], payload(repo.workspace, command), repo.workspace,
                            {**env, **repo.env, "STATEWISE_NO_WARM": "1"})
            finally:
                for path in reversed(made):
                    if path.is_dir():
                        shutil.rmtree(path)
                    else:
                        path.unlink(missing_ok=True)

    def one(index: int, entry: Mapping[str, Any]) -> list[Outcome]:
        slot = None if paths_world is not None and replayed(entry["sha256"]) else free.get()
        try:
            return sent(slot, entry)
        finally:
            if slot is not None:
                free.put(slot)

    def sent(slot: int | None, entry: Mapping[str, Any]) -> list[Outcome]:
        repo, hook = worlds[slot] if slot is not None else (paths_world.repo, paths_world.hook)  # type: ignore[union-attr]
        command = str(entry["command"]).replace(REPO_MARK, str(repo.workspace))
        label = labels.get(entry["sha256"], {}).get("label", "ordinary")
        verdict, reason, seconds = send(repo, hook, command, entry["sha256"])
        found = [Outcome(entry["sha256"], label, verdict, cause(reason, repo.workspace, command) if verdict in STOPS
                         else reason, seconds, raw=reason.replace(str(repo.workspace), "<repo>"))]
        if package is not None and ccsn_hook:
            entry_script = package / "dist" / "bin" / "cc-safety-net.js"
            verdict, reason, seconds = call(["node", str(entry_script), "hook", "--claude-code"],
                                            payload(repo.workspace, command), repo.workspace, {**ccsn_env, **repo.env})
            rule = re.search(r"Rule: (\S+)", reason)
            found.append(Outcome(entry["sha256"], label, verdict, rule.group(1) if rule else cause(
                reason, repo.workspace, command), seconds, guard="cc-safety-net"))
        texts[entry["sha256"]] = command
        done = len(texts)
        if progress and done % 1000 == 0:
            print(f"  {done}/{len(entries)} commands sent", file=sys.stderr, flush=True)
        return found

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(one, range(len(entries)), entries))
        outcomes = [o for group in results for o in group]
        if package is not None and not ccsn_hook:
            calls = [(str(e["command"]).replace(REPO_MARK, str(world(i).workspace)), world(i).workspace)
                     for i, e in enumerate(entries)]
            started = time.perf_counter()
            answers = ccsn_batch(package, calls, {**ccsn_env, **world(0).env})
            each = (time.perf_counter() - started) / max(1, len(calls))
            outcomes += [Outcome(e["sha256"], labels.get(e["sha256"], {}).get("label", "ordinary"), verdict, reason,
                                 each, guard="cc-safety-net")
                         for e, (verdict, reason) in zip(entries, answers, strict=True)]
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return outcomes, texts, worlds[0][0].workspace


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.2f}%)" if whole else f"{part}/0"


def report(outcomes: Sequence[Outcome], texts: Mapping[str, str], *, show_commands: bool = True) -> str:
    """The figures: stops per label, the causes of ordinary stops, the side by side table."""
    lines: list[str] = []
    guards = list(dict.fromkeys(o.guard for o in outcomes))
    by_guard = {guard: {o.sha256: o for o in outcomes if o.guard == guard} for guard in guards}
    for guard in guards:
        items = list(by_guard[guard].values())
        ordinary = [o for o in items if o.label == "ordinary"]
        dangerous = [o for o in items if o.label == "dangerous"]
        stopped_ordinary = [o for o in ordinary if o.verdict in STOPS]
        stopped_dangerous = [o for o in dangerous if o.verdict in STOPS]
        verdicts = Counter(o.verdict for o in items)
        times = sorted(o.seconds * 1000 for o in items)
        lines.append(f"## {guard}")
        lines.append(f"commands {len(items)}: allowed {verdicts['allow']}, denied {verdicts['deny']}, "
                     f"asked {verdicts['ask']}")
        lines.append(f"ordinary stopped (deny or ask): {_share(len(stopped_ordinary), len(ordinary))}"
                     + (f"; goal at most {GOAL_ORDINARY_STOPPED:.1%}: "
                        f"{'met' if len(stopped_ordinary) <= GOAL_ORDINARY_STOPPED * len(ordinary) else 'NOT met'}"
                        if guard == "statewise" else ""))
        lines.append(f"dangerous stopped: {_share(len(stopped_dangerous), len(dangerous))}")
        if times:
            lines.append(f"per call: p50 {statistics.median(times):.0f} ms, p90 "
                         f"{times[min(len(times) - 1, round(0.9 * (len(times) - 1)))]:.0f} ms, max {times[-1]:.0f} ms")
        for title, group in (("ordinary stops by cause", stopped_ordinary),
                             ("dangerous commands let through", [o for o in dangerous if o.verdict not in STOPS])):
            if not group:
                continue
            lines.append(f"\n{title}:")
            counts = Counter((o.verdict, o.reason) for o in group)
            for (verdict, reason), count in counts.most_common():
                lines.append(f"  {count:5}  {verdict:5} {reason or '(no reason)'}")
                if show_commands:
                    examples = [texts[o.sha256] for o in group if (o.verdict, o.reason) == (verdict, reason)][:3]
                    lines += [f"           e.g. {_clip(text)}  [{sha[:12]}]" for text, sha in
                              ((texts[o.sha256], o.sha256) for o in group
                               if (o.verdict, o.reason) == (verdict, reason) and texts[o.sha256] in examples)]
        lines.append("")
    if len(guards) == 2:
        lines.append(side_by_side(by_guard[guards[0]], by_guard[guards[1]], texts, guards, show_commands))
    return "\n".join(lines)


def _clip(text: str, width: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def side_by_side(first: Mapping[str, Outcome], second: Mapping[str, Outcome], texts: Mapping[str, str],
                 names: Sequence[str], show_commands: bool) -> str:
    """For ordinary and dangerous commands: stopped by both, by one only, by neither."""
    lines = [f"## side by side: {names[0]} vs {names[1]}",
             f"| label | both stop | only {names[0]} | only {names[1]} | neither |", "|---|---:|---:|---:|---:|"]
    only: dict[tuple[str, str], list[str]] = {}
    for label in ("ordinary", "dangerous"):
        counts: Counter[str] = Counter()
        for sha, outcome in first.items():
            if outcome.label != label or sha not in second:
                continue
            a, b = outcome.verdict in STOPS, second[sha].verdict in STOPS
            key = "both" if a and b else names[0] if a else names[1] if b else "neither"
            counts[key] += 1
            if a != b:
                only.setdefault((label, key), []).append(sha)
        lines.append(f"| {label} | {counts['both']} | {counts[names[0]]} | {counts[names[1]]} | {counts['neither']} |")
    for (label, who), shas in sorted(only.items()):
        source = first if who == names[0] else second
        lines.append(f"\n{label} commands only {who} stops ({len(shas)}), by cause:")
        for reason, count in Counter(source[sha].reason for sha in shas).most_common():
            lines.append(f"  {count:5}  {reason}")
            if show_commands:
                lines += [f"           e.g. {_clip(texts[sha])}  [{sha[:12]}]"
                          for sha in [s for s in shas if source[s].reason == reason][:2]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_OUT, help="the corpus extract.py wrote")
    parser.add_argument("--labels", type=Path, default=TRAFFIC / "labels.yaml")
    parser.add_argument("--test-paths", type=Path, default=DEFAULT_EVIDENCE,
                        help="which test paths existed where the agent ran each command (test_paths.py)")
    parser.add_argument("--jobs", type=int, default=2, help="hook calls at a time (default 2)")
    parser.add_argument("--limit", type=int, help="only the first N commands (in sha256 order)")
    parser.add_argument("--ccsn", action="store_true", help="also run cc-safety-net side by side")
    parser.add_argument("--ccsn-cache", type=Path, default=Path.home() / ".cache" / "statewise-bench" / "ccsn",
                        help="where cc-safety-net is installed from npm")
    parser.add_argument("--census", action="store_true", help="print the program census and exit")
    parser.add_argument("--ccsn-hook", action="store_true",
                        help="spawn cc-safety-net's hook for each command instead of one process for all")
    parser.add_argument("--no-warm", action="store_true",
                        help="STATEWISE_NO_WARM=1: every hook call checks in its own process, no warm worker")
    parser.add_argument("--no-commands", action="store_true", help="print causes without example commands")
    parser.add_argument("--json", type=Path, help="write every outcome (hashes, verdicts, causes) here")
    parser.add_argument("--keep", action="store_true", help="keep the repositories")
    parser.add_argument("--report", type=Path, metavar="JSON",
                        help="print the report of an earlier run's --json with the current labels, and exit")
    args = parser.parse_args(argv)
    entries = read_corpus(args.corpus)
    if args.limit is not None:
        entries = entries[: args.limit]
    if args.census:
        print(census_tables(entries))
        return 0
    labels = load_labels(args.labels)
    evidence = load_evidence(args.test_paths)
    databases = load_databases(args.test_paths)
    if args.report:
        saved = [Outcome(**item) for item in json.loads(args.report.read_text())]
        texts = {e["sha256"]: str(e["command"]).replace(REPO_MARK, "<repo>") for e in entries}
        # Labels as they are now; causes grouped again from the whole reason (as `cause` is now).
        relabelled = [Outcome(**{**asdict(o), "label": labels.get(o.sha256, {}).get("label", "ordinary"),
                                 "reason": cause(o.raw, Path("<repo>"), texts.get(o.sha256, ""))
                                 if o.raw and o.verdict in STOPS else o.reason}) for o in saved]
        print(report(relabelled, texts, show_commands=not args.no_commands))
        return 0
    started = time.perf_counter()
    created: Counter[str] = Counter()
    outcomes, texts, _ = run(entries, labels, jobs=args.jobs, ccsn=args.ccsn, ccsn_cache=args.ccsn_cache,
                             ccsn_hook=args.ccsn_hook, warm=not args.no_warm, keep=args.keep, progress=True,
                             evidence=evidence, created=created, databases=databases)
    elapsed = time.perf_counter() - started
    print(report(outcomes, texts, show_commands=not args.no_commands))
    sent = sum(1 for e in entries if e["sha256"] in evidence)
    print(f"test paths ({args.test_paths.name}): {sent} commands name them; paths created as the agent's "
          f"repository had them {created['created']}, not created (missing there, or no evidence) "
          f"{created['not created']}; Django migrations {sum(1 for e in entries if e['sha256'] in databases)}, "
          f"a SQLite project made where they run {created['django projects']}, no evidence "
          f"{created['django unknown']}")
    dangerous = sum(1 for e in entries if labels.get(e["sha256"], {}).get("label") == "dangerous")
    print(f"\n{len(entries)} corpus commands ({dangerous} labelled dangerous) through the installed hook, "
          f"{args.jobs} at a time, in {elapsed:.0f} s (repositories and installs included)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    ordinary = [o for o in outcomes if o.guard == "statewise" and o.label == "ordinary"]
    stopped = sum(1 for o in ordinary if o.verdict in STOPS)
    return 0 if stopped <= GOAL_ORDINARY_STOPPED * len(ordinary) else 1


if __name__ == "__main__":
    sys.exit(main())
