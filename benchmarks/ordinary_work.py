"""Quiet on ordinary work, firm on dangerous work: both corpora through the real hook.

Every entry of ``benchmarks/ordinary/ordinary.yaml`` (commands and file edits coding agents run
daily) and ``benchmarks/ordinary/dangerous.yaml`` goes through
``statewise.integrations.hooks.run_hook("claude-code", ...)`` with the JSON Claude Code sends
before a tool runs (``cwd``, ``hook_event_name: PreToolUse``, ``tool_name`` Bash/Write/Edit,
``tool_input``; ``--agent codex|gemini``: as Codex or Gemini CLI sends it, edits as
apply_patch / write_file / replace, and read as that client reads the answer), in fresh
real repositories built from ``benchmarks/ordinary/projects.yaml``:
real git, a real bare origin whose ``main`` is protected by StateWise's own pre-receive hook,
real project files, real virtual environments where the template asks for one. Two
conditions: an empty store, and the project's populated, correct store. The hook only
decides; nothing in the corpus is executed.

Goals: the ordinary corpus gets 0 denials and 0 questions; the dangerous corpus is 100%
denied or asked. The exit status is 0 when both goals are met.

Usage::

    python benchmarks/ordinary_work.py [--corpus ordinary|dangerous] [--condition empty|populated]
                                      [--project NAME] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from statewise.contract import builtin_contract
from statewise.integrations.hooks import run_hook
from statewise.records import Provenance, RecordDraft
from statewise.store import open_store
from statewise.verifiers.protection import install_branch_protection
from statewise.workspace import derive_task_scope

HERE = Path(__file__).resolve().parent / "ordinary"
CORPORA = ("ordinary", "dangerous")
CONDITIONS = ("empty", "populated")
#: The PATH the agent's shell has: system directories only (no developer's venv or shims),
#: with the project's venv first when the template says it is activated.
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
_GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass(frozen=True)
class Entry:
    """One corpus entry: a shell command or a file edit in one project."""

    corpus: str
    project: str
    tool: str  # Bash, Write or Edit
    tool_input: Mapping[str, Any]
    label: str
    why: str = ""
    setup: tuple[tuple[str, ...], ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)
    before: tuple[Mapping[str, str], ...] = ()
    store: tuple[Mapping[str, Any], ...] = ()
    shell_gap: str = ""

    @property
    def isolated(self) -> bool:
        """Entries that change the repository or the store first get a repository of their own."""
        return bool(self.setup or self.files or self.before or self.store)


@dataclass(frozen=True)
class Outcome:
    corpus: str
    condition: str
    project: str
    label: str
    verdict: str  # allow, deny or ask
    reason: str
    seconds: float
    why: str = ""
    shell_gap: str = ""


def _edit_input(project_root: Path, item: Mapping[str, Any]) -> tuple[str, dict[str, Any], str]:
    tool = item["tool"]
    path = str(project_root / item["path"])
    if tool == "Write":
        return tool, {"file_path": path, "content": item["content"]}, f"Write {item['path']}"
    if tool == "Edit":
        return tool, {"file_path": path, "old_string": item["old"], "new_string": item["new"]}, f"Edit {item['path']}"
    raise ValueError(f"unknown edit tool {tool!r}")


def load_corpus(name: str, root: Path = HERE) -> list[dict[str, Any]]:
    """The raw entries of one corpus file, flattened to one dict per command or edit."""
    data = yaml.safe_load((root / f"{name}.yaml").read_text())
    flat: list[dict[str, Any]] = []
    for group in data["entries"]:
        if "commands" in group or "edits" in group:
            flat += [{"project": group["project"], "command": c} for c in group.get("commands", [])]
            flat += [{"project": group["project"], **e} for e in group.get("edits", [])]
        else:
            flat.append(dict(group))
    return flat


def load_projects(root: Path = HERE) -> dict[str, dict[str, Any]]:
    return yaml.safe_load((root / "projects.yaml").read_text())["projects"]


_FIELDS = frozenset({"project", "command", "tool", "path", "content", "old", "new", "why", "setup", "files",
                     "before", "store", "shell_gap"})


def _entry(corpus: str, raw: Mapping[str, Any], workspace: Path) -> Entry:
    unknown = set(raw) - _FIELDS
    if unknown:  # a YAML slip such as an unquoted comma in a flow mapping makes a stray key
        raise ValueError(f"{corpus} entry {raw.get('command') or raw.get('path')!r} "
                         f"has unknown fields {sorted(unknown)}")
    common = dict(corpus=corpus, project=raw["project"], why=raw.get("why", ""),
                  setup=tuple(tuple(step) for step in raw.get("setup", ())), files=dict(raw.get("files", {})),
                  before=tuple(raw.get("before", ())), store=tuple(raw.get("store", ())),
                  shell_gap=" ".join(str(raw.get("shell_gap", "")).split()))
    if "command" in raw:
        return Entry(tool="Bash", tool_input={"command": raw["command"]}, label=raw["command"], **common)
    tool, tool_input, label = _edit_input(workspace, raw)
    return Entry(tool=tool, tool_input=tool_input, label=label, **common)


# --- real repositories -----------------------------------------------------------------------


def _run(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> None:
    subprocess.run(list(argv), cwd=cwd, check=True, capture_output=True, timeout=120,
                   env={**os.environ, **_GIT_ENV, **(env or {})})


def _write_files(root: Path, files: Mapping[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        if relative.endswith(".sh"):
            path.chmod(0o755)


@dataclass
class Repo:
    """One fresh project: its workspace, bare origin, store file and the agent's PATH."""

    workspace: Path
    origin: Path
    store: str
    env: dict[str, str]


def build_repo(base: Path, name: str, template: Mapping[str, Any], extra_files: Mapping[str, str] | None = None
               ) -> Repo:
    """A real repository for ``template``: files committed on main and pushed to a bare origin
    that protects main, then branch feature/work with one unpushed commit checked out."""
    base.mkdir(parents=True)
    origin, workspace = base / "origin.git", base / name
    _run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], base)
    _run(["git", "init", "-q", "-b", "main", str(workspace)], base)
    _write_files(workspace, template.get("files", {}))
    _write_files(workspace, extra_files or {})
    _run(["git", "add", "-A"], workspace)
    _run(["git", "commit", "-q", "-m", "Initial project"], workspace)
    _run(["git", "remote", "add", "origin", str(origin)], workspace)
    _run(["git", "push", "-q", "-u", "origin", "main"], workspace)
    _run(["git", "remote", "set-head", "origin", "main"], workspace)
    install_branch_protection(origin, ["main"])  # after main exists: the hook refuses its creation too
    _run(["git", "switch", "-q", "-c", "feature/work"], workspace)
    (workspace / "NOTES.md").write_text("Work in progress.\n")
    _run(["git", "add", "NOTES.md"], workspace)
    _run(["git", "commit", "-q", "-m", "Start feature work"], workspace)
    env = {"PATH": BASE_PATH}
    if template.get("venv"):
        # An activated venv has pip (python -m venv); one uv made has none (uv venv does not
        # install pip), which is also much faster to create.
        pip = [] if template.get("activated") else ["--without-pip"]
        _run(["/usr/bin/python3", "-m", "venv", *pip, ".venv"], workspace)
        if template.get("activated"):
            env = {"PATH": f"{workspace / '.venv' / 'bin'}:{BASE_PATH}", "VIRTUAL_ENV": str(workspace / ".venv")}
    return Repo(workspace=workspace, origin=origin, store=str(base / "store.db"), env=env)


def _scope_text(scope: str, workspace: Path) -> str:
    task = derive_task_scope(workspace)
    if scope == "repo":
        return f"repo:{task.repo}"
    if scope == "workspace":
        return f"workspace:{task.workspace}"
    if scope == "user":
        return f"user:{task.user}"
    if scope.startswith("branch:"):
        return f"repo:{task.repo}@{scope.split(':', 1)[1]}"
    return scope


def _flatten(records: Sequence[Any]) -> Iterator[Mapping[str, Any]]:
    for item in records:
        if isinstance(item, list):
            yield from _flatten(item)
        else:
            yield item


def seed_store(repo: Repo, records: Sequence[Any]) -> int:
    """Write the populated store's records (confirmed now by their authority)."""
    store = open_store(repo.store, key_schema=builtin_contract())
    count = 0
    latest = {(item["key"], item["scope"]): item for item in _flatten(records)}  # an entry's own records win
    try:
        for item in latest.values():
            authority = item.get("authority", "developer")
            # A per-user setting is the user's own word (a teammate's would not count).
            actor = (derive_task_scope(repo.workspace).user or "dev") if item["scope"] == "user" else "dev"
            provenance = Provenance(source=item.get("source", "developer"), authority=authority,
                                    actor=actor if authority == "developer" else "benchmark")
            store.put(RecordDraft(key=item["key"], value=item["value"],
                                  scope=_scope_text(item["scope"], repo.workspace), provenance=provenance))
            count += 1
    finally:
        store.close()
    return count


@contextmanager
def agent_environment(env: Mapping[str, str]) -> Iterator[None]:
    """The hook reads the agent's environment from its own process (PATH decides which pip
    runs), so each project's PATH and VIRTUAL_ENV are set around its calls."""
    saved = {name: os.environ.get(name) for name in ("PATH", "VIRTUAL_ENV")}
    os.environ.pop("VIRTUAL_ENV", None)
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- running ---------------------------------------------------------------------------------


AGENTS = ("claude-code", "codex", "gemini")


def _verdict(agent: str, stdout: str, exit_code: int = 0, stderr: str = "") -> tuple[str, str]:
    """allow, deny or ask, and the reason, as the client reads the hook's answer."""
    data = json.loads(stdout or "{}")
    if agent == "gemini":
        return ("deny" if data.get("decision") == "deny" else "allow"), str(data.get("reason", ""))
    output = data.get("hookSpecificOutput", {})
    decision = output.get("permissionDecision")
    if agent == "codex" and (exit_code == 2 or decision in ("deny", "ask")):
        return "deny", stderr or output.get("permissionDecisionReason", "")  # Codex has no ask
    if decision in (None, "allow"):
        return "allow", output.get("permissionDecisionReason", output.get("additionalContext", ""))
    return decision, output.get("permissionDecisionReason", "")


def client_call(agent: str, workspace: Path, tool: str, tool_input: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The corpus's Claude Code tool call as ``agent`` makes it: Codex's shell is ``Bash`` too
    and its edits are apply_patch patches; Gemini CLI has run_shell_command, write_file, replace."""
    if agent == "claude-code" or (agent == "codex" and tool == "Bash"):
        return tool, dict(tool_input)
    if agent == "gemini":
        if tool == "Bash":
            return "run_shell_command", {"command": tool_input["command"]}
        if tool == "Write":
            return "write_file", {"file_path": tool_input["file_path"], "content": tool_input["content"]}
        return "replace", {"file_path": tool_input["file_path"], "old_string": tool_input["old_string"],
                           "new_string": tool_input["new_string"]}
    relative = os.path.relpath(tool_input["file_path"], workspace)
    if tool == "Write":
        body = "".join(f"+{line}\n" for line in str(tool_input["content"]).splitlines())
        patch = f"*** Begin Patch\n*** Add File: {relative}\n{body}*** End Patch\n"
    else:
        old = "".join(f"-{line}\n" for line in str(tool_input["old_string"]).splitlines())
        new = "".join(f"+{line}\n" for line in str(tool_input["new_string"]).splitlines())
        patch = f"*** Begin Patch\n*** Update File: {relative}\n@@\n{old}{new}*** End Patch\n"
    return "apply_patch", {"command": patch}


def call_hook(repo: Repo, tool: str, tool_input: Mapping[str, Any], *, event: str = "pre",
              response: str | None = None, agent: str = "claude-code") -> tuple[str, str, float]:
    tool, tool_input = client_call(agent, repo.workspace, tool, tool_input)
    names = {"pre": "BeforeTool", "post": "AfterTool"} if agent == "gemini" else {"pre": "PreToolUse",
                                                                                  "post": "PostToolUse"}
    payload: dict[str, Any] = {"session_id": "ordinary-work", "cwd": str(repo.workspace),
                               "hook_event_name": names[event], "tool_name": tool, "tool_input": dict(tool_input)}
    if response is not None:
        payload["tool_response"] = ({"llmContent": response} if agent == "gemini" else response if agent == "codex"
                                    else {"stdout": "", "stderr": response})
    start = time.perf_counter()
    with agent_environment(repo.env):
        outcome = run_hook(agent, json.dumps(payload), event=event, store_location=repo.store)
    seconds = time.perf_counter() - start
    if event == "post":
        return "post", outcome.stdout, seconds
    verdict, reason = _verdict(agent, outcome.stdout, outcome.exit_code, outcome.stderr)
    return verdict, reason, seconds


def run_corpus(corpus: str, condition: str, base: Path, *, project: str | Sequence[str] | None = None,
               limit: int | None = None, projects: Mapping[str, Mapping[str, Any]] | None = None,
               agent: str = "claude-code") -> list[Outcome]:
    """Every entry of ``corpus`` under ``condition`` (``project``: only these; ``limit``: the
    first N per project), each in a fresh repository of its own project under ``base``, sent as
    ``agent`` sends it."""
    projects = projects or load_projects()
    wanted = {project} if isinstance(project, str) else set(project) if project else None
    raw = [r for r in load_corpus(corpus) if wanted is None or r["project"] in wanted]
    if limit is not None:
        seen: Counter[str] = Counter()
        kept = []
        for item in raw:
            if seen[item["project"]] < limit:
                kept.append(item)
                seen[item["project"]] += 1
        raw = kept
    shared: dict[str, Repo] = {}
    outcomes: list[Outcome] = []
    for index, item in enumerate(raw):
        template = projects[item["project"]]
        probe = _entry(corpus, item, Path("/"))
        if probe.isolated:
            repo = build_repo(base / f"{corpus}-{condition}-{index}", item["project"], template, probe.files)
            if condition == "populated":
                seed_store(repo, [template.get("store", []), list(probe.store)])
        else:
            repo = shared.get(item["project"])
            if repo is None:
                repo = build_repo(base / f"{corpus}-{condition}-{item['project']}", item["project"], template)
                if condition == "populated":
                    seed_store(repo, template.get("store", []))
                shared[item["project"]] = repo
        for step in probe.setup:
            _run(step, repo.workspace)
        for earlier in probe.before:
            call_hook(repo, "Bash", {"command": earlier["command"]}, event="post", response=earlier["output"],
                      agent=agent)
        entry = _entry(corpus, item, repo.workspace)
        verdict, reason, seconds = call_hook(repo, entry.tool, entry.tool_input, agent=agent)
        outcomes.append(Outcome(corpus=corpus, condition=condition, project=entry.project, label=entry.label,
                                verdict=verdict, reason=reason, seconds=seconds, why=entry.why,
                                shell_gap=entry.shell_gap))
    return outcomes


def goal_met(outcome: Outcome) -> bool:
    """Ordinary: allowed. Dangerous: denied or asked."""
    return (outcome.verdict == "allow") == (outcome.corpus == "ordinary")


def goals_met(outcomes: Sequence[Outcome]) -> bool:
    """Every entry meets its goal, apart from marked shell-normalizer gaps."""
    return all(goal_met(o) for o in outcomes if not o.shell_gap)


def _what_stopped(outcome: Outcome) -> str:
    """The checks that stopped an entry, or what the developer is asked, from its reason."""
    if outcome.verdict == "allow":
        return "**allowed**"
    if "the developer's approval" in outcome.reason:
        return "asks for the developer's approval (`requires_approval`)"
    if outcome.verdict == "ask":
        keys = re.findall(r"What is ([a-z_.]+(?:\[[^\]]*\])?)", outcome.reason)
        return "asks for " + ", ".join(f"`{k}`" for k in dict.fromkeys(keys)) if keys else "asks"
    checks = re.findall(r"invariant:([a-z_]+)", outcome.reason)
    if checks:
        return "denied: " + ", ".join(f"`{c}`" for c in dict.fromkeys(checks))
    if "cannot check" in outcome.reason:
        return "denied: the command cannot be read with confidence"
    return "denied: " + outcome.reason.split(":", 1)[-1].strip()[:80]


def dangerous_table(outcomes: Sequence[Outcome]) -> str:
    """What each dangerous entry got under each condition (docs/results-world.md)."""
    rows: dict[tuple[str, str, str], dict[str, str]] = {}
    for outcome in outcomes:
        if outcome.corpus == "dangerous":
            row = rows.setdefault((outcome.label, outcome.why, outcome.project), {})
            row[outcome.condition] = _what_stopped(outcome)
    lines = ["| entry | project | empty store | populated store |", "|---|---|---|---|"]
    for (label, why, project), got in rows.items():
        lines.append(f"| `{label}`: {why} | {project} | {got.get('empty', '–')} | {got.get('populated', '–')} |")
    return "\n".join(lines)


def render(outcomes: Sequence[Outcome]) -> str:
    lines = ["| corpus | condition | entries | allowed | denied | asked | shell gaps | goal met | median ms | max ms |",
             "|---|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault((outcome.corpus, outcome.condition), []).append(outcome)
    for (corpus, condition), items in groups.items():
        counts = Counter(o.verdict for o in items)
        times = sorted(o.seconds * 1000 for o in items)
        gaps = sum(1 for o in items if o.shell_gap)
        lines.append(f"| {corpus} | {condition} | {len(items)} | {counts['allow']} | {counts['deny']} | "
                     f"{counts['ask']} | {gaps} | {'yes' if goals_met(items) else 'NO'} | "
                     f"{times[len(times) // 2]:.0f} | {times[-1]:.0f} |")
    lines.append("")
    for (corpus, condition), items in groups.items():
        stopped = [o for o in items if o.verdict != "allow"]
        allowed_danger = [o for o in items if o.verdict == "allow" and corpus == "dangerous"]
        gaps = [o for o in items if o.shell_gap and not goal_met(o)]
        if stopped:
            lines.append(f"Denials and questions, {corpus} corpus, {condition} store:")
            lines.append("")
            for o in stopped:
                reason = " ".join(o.reason.split())
                lines.append(f"- {o.verdict} `{o.label}` ({o.project}){': ' + o.why if o.why else ''}. "
                             f"Reason: {reason}")
            lines.append("")
        if allowed_danger:
            lines.append(f"ALLOWED from the dangerous corpus, {condition} store:")
            lines += [f"- `{o.label}` ({o.project}): {o.why}"
                      + (f" [shell normalizer gap: {o.shell_gap}]" if o.shell_gap else "") for o in allowed_danger]
            lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=CORPORA, action="append")
    parser.add_argument("--condition", choices=CONDITIONS, action="append")
    parser.add_argument("--project", action="append", help="only this project (repeatable)")
    parser.add_argument("--limit", type=int, help="the first N entries per project")
    parser.add_argument("--json", help="write every outcome as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the repositories (their path is printed)")
    parser.add_argument("--agent", choices=AGENTS, default="claude-code",
                        help="send each call as this client sends it (default: claude-code)")
    parser.add_argument("--dangerous-table", metavar="JSON",
                        help="print what each dangerous entry got, from a --json file of an earlier run, and exit")
    args = parser.parse_args(argv)
    if args.dangerous_table:
        saved = json.loads(Path(args.dangerous_table).read_text())
        print(dangerous_table([Outcome(**item) for item in saved]))
        return 0
    base = Path(tempfile.mkdtemp(prefix="statewise-ordinary-"))
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    try:
        for corpus in args.corpus or CORPORA:
            for condition in args.condition or CONDITIONS:
                outcomes += run_corpus(corpus, condition, base, project=args.project, limit=args.limit,
                                       agent=args.agent)
    finally:
        if args.keep:
            print(f"repositories kept in {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    elapsed = time.perf_counter() - started
    print(render(outcomes))
    print(f"{len(outcomes)} hook calls as {args.agent} in {elapsed:.1f}s (repositories, venvs and stores included); "
          f"goals {'met' if goals_met(outcomes) else 'NOT met'}.")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=2))
    return 0 if goals_met(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
