"""Driving the hook exactly as ``statewise install`` installs it: the wrapper a client runs, in
a subprocess, fed the client's JSON, in a real repository with a real bare origin.

Shared by the tests of self-protection, secrets and the cached-state sequence (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from statewise.contract import builtin_contract
from statewise.integrations.install import AGENTS, install_hooks, wrapper_path
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import git, make_git_sandbox
from statewise.store.sqlite import SQLiteStore

DEVELOPER = Provenance(source="developer", authority="developer", actor="dev")

#: The JSON shape of a pre-tool call, per client.
_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
SHELL_TOOL = {"claude-code": "Bash", "codex": "Bash", "gemini": "run_shell_command"}


@dataclass(frozen=True)
class Answer:
    """What the installed hook answered: allow/deny/ask, or "defer" (no opinion: the client's own
    rules decide), and the reason."""

    decision: str
    reason: str
    exit_code: int


@dataclass(frozen=True)
class Project:
    """A repository with StateWise installed for every client."""

    root: Path  # the sandbox: origin.git, work, home, cache
    work: Path
    origin: Path
    home: Path
    env: dict[str, str]

    def call(self, cwd: Path | str, tool: str, tool_input: dict[str, object], *, agent: str = "claude-code"
             ) -> Answer:
        """One pre-tool call through the installed wrapper."""
        directory = self.work / cwd if not Path(cwd).is_absolute() else Path(cwd)
        payload = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(directory),
                   "hook_event_name": _EVENT[agent], "tool_name": tool, "tool_input": tool_input,
                   "tool_use_id": "t1"}
        done = subprocess.run([str(wrapper_path(project=self.work)), agent, "pre"], input=json.dumps(payload),
                              capture_output=True, text=True, cwd=directory, env=self.env, timeout=60)
        return _answer(agent, done)

    def bash(self, command: str, cwd: Path | str = "", *, agent: str = "claude-code") -> Answer:
        """A shell call."""
        return self.call(cwd or self.work, SHELL_TOOL[agent], {"command": command}, agent=agent)


def _answer(agent: str, done: subprocess.CompletedProcess[str]) -> Answer:
    if done.returncode == 2:
        return Answer("deny", done.stderr.strip(), 2)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    data = json.loads(done.stdout)
    if agent == "gemini" and "decision" in data:
        return Answer(data["decision"], str(data.get("reason", "")), 0)
    specific = data.get("hookSpecificOutput", {})
    decision = specific.get("permissionDecision")
    return Answer(decision or "defer", str(specific.get("permissionDecisionReason", "")), 0)


def make_project(tmp_path: Path, *, protected: list[str] | None = None, warm: bool = False) -> Project:
    """A sandbox repository (``work``, with ``.env``, ``config/prod.yaml``, ``migrations/0001.sql``,
    ``src/``; branches ``main`` and ``feature``, an older commit tagged ``old``) cloned from a
    bare ``origin.git`` that protects ``main``; StateWise installed for all three clients; a store
    holding ``protected`` as the developer's ``fs.protected_paths`` (none when None)."""
    sandbox = make_git_sandbox(tmp_path / "sb", diverged=False)
    work = sandbox.work
    git(work, "tag", "old")
    for name in ("config", "migrations", "src", "build"):
        (work / name).mkdir(exist_ok=True)
    (work / ".env").write_text("SECRET=0\n")
    (work / ".env.example").write_text("SECRET=\n")
    (work / "config" / "prod.yaml").write_text("db: prod\n")
    (work / "migrations" / "0001.sql").write_text("create table t(x int);\n")
    (work / "src" / "app.py").write_text("print(1)\n")
    (work / ".gitignore").write_text(".env\n.statewise/\nbuild/\n")
    git(work, "add", ".gitignore", "config", "migrations", "src", ".env.example")
    git(work, "commit", "--quiet", "-m", "project files")
    git(work, "branch", "feature")
    git(work, "push", "--quiet", "origin", "feature")
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("STATEWISE_")}
    env.update(HOME=str(home), STATEWISE_CACHE_DIR=str(tmp_path / "cache"), XDG_CONFIG_HOME=str(home / ".config"))
    if warm:
        runtime = tmp_path / "run"
        runtime.mkdir(mode=0o700)
        env.update(STATEWISE_RUNTIME_DIR=str(runtime), STATEWISE_WARM_IDLE="20")
    else:
        env["STATEWISE_NO_WARM"] = "1"
    for agent in ("claude-code", "codex", "gemini"):
        install_hooks(agent, project=work)
    store = SQLiteStore(str(work / ".statewise" / "store.db"), key_schema=builtin_contract())
    try:
        if protected is not None:
            store.put(RecordDraft(key="fs.protected_paths", value=protected,
                                  scope=f"repo:{sandbox.repo_identity}", provenance=DEVELOPER))
    finally:
        store.close()
    return Project(root=tmp_path, work=work, origin=sandbox.origin, home=home, env=env)


def client_env(agent: str, project: Path) -> dict[str, str]:
    """The environment a client gives its hooks: its project-folder variable (Codex sets none
    and runs the hook in the session's folder)."""
    variable = AGENTS[agent].project_dir_var
    return {**os.environ, **({variable: str(project)} if variable else {})}
