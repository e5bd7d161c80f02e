"""The gate checks what will actually run (issue 10 item 5): an install's ``index`` slot is
read from the command, its environment and pip's configuration, so the slot and the command
it came from cannot disagree.

The regression: a store says the project installs from a private index; the agent's
environment names that private index too, but the command installs from the public one. It
must not get "execute: every check passed". Real repository, real virtual environment, real
SQLite store, Claude Code's PreToolUse JSON through ``run_hook``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statewise.actions import Action
from statewise.commands import DEFAULT_INDEX, UNRESOLVED, analyze_command, command_disagreement
from statewise.contract import builtin_contract
from statewise.integrations.hooks import run_hook
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

PRIVATE = "http://127.0.0.1:9/private/simple"
PUBLIC = "https://pypi.org/simple"
DEV = Provenance(source="developer", authority="developer", actor="dev")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("index")
    origin, repo, home = root / "origin.git", root / "repo", root / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", str(origin)]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    (repo / "requirements.txt").write_text("internal-lib\n")
    (repo / ".gitignore").write_text(".venv/\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "push", "-q", "-u", "origin", "main"], cwd=repo, check=True, env=env)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    # The venv's pip launcher as pip writes it (the packages themselves are never fetched).
    pip = repo / ".venv" / "bin" / "pip"
    pip.write_text(f"#!{repo / '.venv' / 'bin' / 'python'}\nimport sys\nsys.exit('not in this test')\n")
    pip.chmod(0o755)
    store = root / "store.db"
    opened = SQLiteStore(str(store), key_schema=builtin_contract())
    try:
        opened.put(RecordDraft(key="python.package_index", value=PRIVATE,
                               scope=f"repo:{derive_task_scope(repo).repo}", provenance=DEV))
    finally:
        opened.close()
    return {"repo": repo, "store": store, "home": home}


def hook(project: dict[str, Path], command: str):
    payload = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(project["repo"]),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "install"}, "tool_use_id": "t1"}
    result = run_hook("claude-code", json.dumps(payload), store_location=str(project["store"]), on_pass="allow")
    output = json.loads(result.stdout).get("hookSpecificOutput", {})
    return output.get("permissionDecision"), output.get("permissionDecisionReason", ""), result.decisions


def index_check(decisions) -> bool | None:
    """Whether install_from_project_index passed (None: it did not apply)."""
    for decision in decisions:
        for check in decision.report.gate:
            if "install_from_project_index" in check.name:
                return check.passed
    return None


@pytest.fixture
def agent_env(project, monkeypatch):
    # The agent's own environment names the private index; a pip.conf-free HOME.
    monkeypatch.setenv("PIP_INDEX_URL", PRIVATE)
    monkeypatch.setenv("HOME", str(project["home"]))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    for name in [n for n in os.environ if n.startswith(("PIP_", "UV_")) and n != "PIP_INDEX_URL"]:
        monkeypatch.delenv(name)  # this machine's PIP_FIND_LINKS would be a second source
    monkeypatch.setenv("PATH", f"{project['repo'] / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VIRTUAL_ENV", str(project["repo"] / ".venv"))


def test_an_install_from_the_public_index_is_not_passed(project, agent_env):
    for command in (f"pip install --index-url {PUBLIC} internal-lib",
                    f"pip install -i {PUBLIC}/ internal-lib",
                    f"PIP_INDEX_URL={PUBLIC} pip install internal-lib",
                    f"pip install --extra-index-url {PUBLIC} internal-lib",
                    f"python -m pip install -i {PUBLIC} internal-lib"):
        decision, reason, decisions = hook(project, command)
        assert decision == "deny", (command, reason)
        assert "every check passed" not in reason
        assert index_check(decisions) is False, (command, [c for d in decisions for c in d.report.gate])


def test_the_slot_is_the_index_the_command_uses(project, agent_env):
    analysis = analyze_command("pip install -i https://user:secret@example.test/simple/ x", cwd=project["repo"])
    assert analysis.actions[0].args["index"] == "https://example.test/simple"  # no credentials kept
    analysis = analyze_command("pip install x", cwd=project["repo"])
    assert analysis.actions[0].args["index"] == PRIVATE  # from PIP_INDEX_URL
    analysis = analyze_command("pip install x", cwd=project["repo"], env={"PATH": os.environ["PATH"],
                                                                         "HOME": str(project["home"])})
    assert analysis.actions[0].args["index"] == DEFAULT_INDEX
    analysis = analyze_command('PIP_INDEX_URL="$(cat idx)" pip install x', cwd=project["repo"])
    assert analysis.operations[0] == UNRESOLVED
    analysis = analyze_command(f"uv pip install --index {PUBLIC} x", cwd=project["repo"])
    assert analysis.actions[0].args["extra_index"] == [PUBLIC]


def test_pip_conf_is_read_for_the_index(project, agent_env, monkeypatch):
    monkeypatch.delenv("PIP_INDEX_URL")
    conf = project["home"] / ".config" / "pip"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "pip.conf").write_text(f"[global]\nindex-url = {PUBLIC}\n")
    try:
        analysis = analyze_command("pip install x", cwd=project["repo"])
        assert analysis.actions[0].args["index"] == PUBLIC
        decision, _, decisions = hook(project, "pip install internal-lib")
        assert decision == "deny" and index_check(decisions) is False
    finally:
        (conf / "pip.conf").unlink()


def test_an_install_from_the_private_index_passes_that_check(project, agent_env):
    # Every invariant holds (the interpreter is the project's venv, the package manager pip),
    # and the index that passed is the one the command uses.
    for command in ("pip install internal-lib", f"pip install -i {PRIVATE}/ internal-lib"):
        decision, reason, decisions = hook(project, command)
        assert decision == "allow", (command, reason)
        assert decisions[0].execute and decisions[0].action.args["index"] == PRIVATE


def test_a_proposal_whose_index_slot_disagrees_with_its_command_is_caught(project, agent_env):
    # The API/planner path: typed slots and the command they claim to describe.
    lying = Action(tool="pip", operation="pip.install", target="internal-lib",
                   args={"package": "internal-lib", "index": PRIVATE,
                         "command": f"pip install --index-url {PUBLIC} internal-lib"})
    why = command_disagreement(lying, cwd=project["repo"])
    assert why is not None and "index" in why and PUBLIC in why
    honest = lying.model_copy(update={"args": {**lying.args, "command": f"pip install -i {PRIVATE} internal-lib"}})
    assert command_disagreement(honest, cwd=project["repo"]) is None
    other = lying.model_copy(update={"args": {**lying.args, "command": "rm -rf build"}})
    assert "not pip.install" in (command_disagreement(other, cwd=project["repo"]) or "")
    assert command_disagreement(lying.model_copy(update={"args": {"package": "x"}}), cwd=project["repo"]) is None


def test_the_gate_stops_a_proposal_whose_slot_disagrees_with_its_command(project, agent_env):
    # Issue 10 item 5, the misjudgement itself: an install action whose index slot names the
    # private index while its command installs from the public one. Every invariant reads the
    # slot and holds; the gate's command check reads the command and does not.
    from statewise.pipeline import Guard
    from statewise.planners.base import Task

    repo = project["repo"]
    interpreter = str(repo / ".venv" / "bin" / "python")
    lying = Action(tool="pip", operation="pip.install", target="internal-lib",
                   args={"package": "internal-lib", "index": PRIVATE, "interpreter": interpreter,
                         "command": f"pip install --index-url {PUBLIC} internal-lib"})
    honest = lying.model_copy(update={"args": {**lying.args, "command": f"pip install -i {PRIVATE} internal-lib"}})
    store = SQLiteStore(str(project["store"]), key_schema=builtin_contract())
    try:
        guard = Guard(store, builtin_contract(), workspace=repo)
        task = Task(text="install internal-lib", scope=derive_task_scope(repo), workspace=str(repo))
        caught = guard.check(task, lying)
        passed = guard.check(task, honest)
    finally:
        store.close()
    assert not caught.execute
    agreement = [c for c in caught.report.gate if c.name == "command_agreement"]
    assert agreement and not agreement[0].passed and PUBLIC in agreement[0].detail
    assert [c.passed for c in passed.report.gate if c.name == "command_agreement"] == [True]
    # The invariant that reads the slot held for the lying proposal: only the command check caught it.
    assert all(c.passed for c in caught.report.gate if "install_from_project_index" in c.name)


def test_a_path_slot_agrees_with_its_command_written_either_way(project):
    # The same file named workspace-relative in the command and absolute in the slot (or the
    # other way round) is no disagreement; another file is.
    repo = project["repo"]
    absolute = Action(tool="fs", operation="fs.delete", target="build",
                      args={"path": str(repo / "build"), "recursive": True, "command": "rm -rf build"})
    assert command_disagreement(absolute, cwd=repo) is None
    relative = absolute.model_copy(update={"args": {**absolute.args, "path": "build",
                                                    "command": f"rm -rf {repo / 'build'}"}})
    assert command_disagreement(relative, cwd=repo) is None
    other = absolute.model_copy(update={"args": {**absolute.args, "path": "src"}})
    assert "path is 'src'" in (command_disagreement(other, cwd=repo) or "")
