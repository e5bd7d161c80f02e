"""The CLI knows when the agent runs it (issue 25, item 2): the clients mark their tool
subprocesses (Claude Code CLAUDECODE=1, Codex CODEX_THREAD_ID, Gemini CLI GEMINI_CLI=1); a
StateWise command that changes records or the installation is asked by the hook, and a record
the agent writes carries the agent's authority whatever flag it passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from statewise.protection import agent_running
from tests.integrations.installed import make_project

CHANGES = ["statewise record add fs.protected_paths build --replace --scope repo:x --authority developer",
           "statewise --store .statewise/store.db record revert rec_1 --reason x",
           "statewise uninstall claude-code", "statewise install codex", "python3 -m statewise record import r.jsonl",
           ".venv/bin/statewise record retract rec_1 --reason x",
           # a newline ends a command as `;` does (it once joined the two lines into one command)
           "true\nstatewise uninstall claude-code", "git status\n\n  statewise record revert rec_1 --reason x",
           "ls |\nstatewise install codex"]
READS = ["statewise record list", "statewise doctor", "statewise keys", "statewise record get k --scope global",
         "git status\nstatewise record list", "echo 'one line\nstatewise uninstall claude-code'"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("cli"), protected=["migrations"])


@pytest.mark.parametrize("command", CHANGES)
def test_statewise_commands_that_change_what_checks_the_agent_are_asked(project, command):
    answer = project.bash(command)
    assert answer.decision == "ask", answer
    assert "statewise" in answer.reason and "developer" in answer.reason


@pytest.mark.parametrize("command", READS)
def test_statewise_commands_that_read_pass(project, command):
    assert project.bash(command).decision not in ("ask", "deny")


def _cli(project, *args: str, marker: str) -> subprocess.CompletedProcess[str]:
    env = {**project.env, marker: "1"}
    return subprocess.run([sys.executable, "-m", "statewise.cli", *args], cwd=project.work, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("marker", ["CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI"])
def test_a_record_the_agent_writes_carries_the_agents_authority(tmp_path, marker):
    project = make_project(tmp_path, protected=["migrations"])
    from statewise.workspace import derive_task_scope

    scope = f"repo:{derive_task_scope(project.work).repo}"
    done = _cli(project, "record", "add", "fs.protected_paths", "build", "--replace", "--scope", scope,
                "--authority", "developer", "--source", "developer", "--json", marker=marker)
    assert done.returncode == 0, done.stderr
    stored = json.loads(done.stdout)
    assert stored["provenance"]["authority"] == "agent" and stored["provenance"]["source"] == "agent_inference"
    assert "agent authority" in done.stderr
    # The developer's protection is not replaced by the agent's word: the delete is not let through.
    answer = project.bash("rm -rf migrations")
    assert answer.decision in ("ask", "deny"), answer
    assert (project.work / "migrations").is_dir()


def test_the_agent_cannot_import_records(tmp_path):
    project = make_project(tmp_path, protected=None)
    (project.work / "r.jsonl").write_text("")
    done = _cli(project, "record", "import", "r.jsonl", marker="CLAUDECODE")
    assert done.returncode != 0 and "only the developer" in done.stderr


def test_agent_markers():
    assert agent_running({"CLAUDECODE": "1"}) == "Claude Code"
    assert agent_running({"CODEX_THREAD_ID": "t"}) == "Codex"
    assert agent_running({"GEMINI_CLI": "1"}) == "Gemini CLI"
    assert agent_running({"HOME": os.environ.get("HOME", "/")}) is None
