"""Protected paths hold from any subdirectory (issue 11, defect 1).

The hook runs with the agent's ``cwd``, which is often a subdirectory of the repository. Each
path an action names is resolved against that cwd; each protected path is relative to the
repository root. These tests drive the real hook entry point, ``run_hook("claude-code", ...)``,
with a real store holding the developer's ``fs.protected_paths`` record, in a real repository
with a real bare origin.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statewise.commands import analyze_command, file_action
from statewise.contract import builtin_contract
from statewise.integrations.hooks import run_hook
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore

DEV = Provenance(source="developer", authority="developer", actor="dev")
PROTECTED = [".env", "config/prod.yaml", "migrations/"]

# (subdirectory the agent is in, command): each must be denied, as it is from the root.
FROM_SUBDIRECTORY: list[tuple[str, str]] = [
    ("config", "echo x > prod.yaml"),
    ("config", "echo x >> ./prod.yaml"),
    ("config", "sed -i s/a/b/ prod.yaml"),
    ("config", "cp ../README.md prod.yaml"),
    ("config", "rm prod.yaml"),
    ("migrations", "rm 0001.sql"),
    ("migrations", "rm -rf ./*"),
    ("migrations", "rm -rf ."),
    ("migrations", "find . -name '*.sql' -delete"),
    ("src", "rm ../.env"),
    ("src", "echo SECRET=1 > ../.env"),
    ("src", "cd .. && rm .env"),
    ("src", "rm -rf ../migrations"),
    ("src", "mv ../config/prod.yaml /tmp/x"),
    ("src", "echo x > link_to_env"),
    ("src/deep", "rm ../../.env"),
    ("src/deep", "tee ../../config/prod.yaml < /dev/null"),
    ("config", "sort -o prod.yaml prod.yaml"),
]
# The same paths from the root, for the comparison the issue makes.
FROM_ROOT = ["echo x > config/prod.yaml", "rm migrations/0001.sql", "rm -rf migrations/*", "rm .env"]


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    sandbox = make_git_sandbox(tmp_path / "sb", diverged=False)
    work = sandbox.work
    for name in ("config", "migrations", "src/deep"):
        (work / name).mkdir(parents=True)
    (work / ".env").write_text("SECRET=0\n")
    (work / "config" / "prod.yaml").write_text("db: prod\n")
    (work / "migrations" / "0001.sql").write_text("create table t(x int);\n")
    (work / "src" / "app.py").write_text("print(1)\n")
    (work / "src" / "link_to_env").symlink_to(work / ".env")
    store_path = tmp_path / "store.db"
    store = SQLiteStore(str(store_path), key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key="fs.protected_paths", value=PROTECTED, scope=f"repo:{sandbox.repo_identity}",
                              provenance=DEV))
    finally:
        store.close()
    return {"work": work, "store": store_path}


def _hook(repo: dict[str, Path], cwd: Path, tool: str, tool_input: dict[str, object]) -> dict[str, object]:
    payload = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(cwd), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "t1"}
    outcome = run_hook("claude-code", json.dumps(payload), store_location=str(repo["store"]))
    assert outcome.exit_code == 0, outcome.stderr
    return json.loads(outcome.stdout).get("hookSpecificOutput", {})


def _bash(repo: dict[str, Path], sub: str, command: str) -> dict[str, object]:
    return _hook(repo, repo["work"] / sub if sub else repo["work"], "Bash", {"command": command})


@pytest.mark.parametrize(("sub", "command"), FROM_SUBDIRECTORY, ids=[f"{s}: {c}" for s, c in FROM_SUBDIRECTORY])
def test_protected_path_is_denied_from_a_subdirectory(repo, sub, command):
    output = _bash(repo, sub, command)
    assert output.get("permissionDecision") == "deny", output
    assert "rotected" in str(output.get("permissionDecisionReason")), output


@pytest.mark.parametrize("command", FROM_ROOT)
def test_protected_path_is_denied_from_the_root(repo, command):
    assert _bash(repo, "", command).get("permissionDecision") == "deny"


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_file_tools_on_an_absolute_protected_path_from_a_subdirectory(repo, tool):
    tool_input = {"file_path": str(repo["work"] / ".env"), "content": "x", "old_string": "0", "new_string": "1"}
    output = _hook(repo, repo["work"] / "src", tool, tool_input)
    assert output.get("permissionDecision") == "deny", output
    relative = _hook(repo, repo["work"] / "config", tool, {**tool_input, "file_path": "prod.yaml"})
    assert relative.get("permissionDecision") == "deny", relative
    through_link = _hook(repo, repo["work"] / "src", tool, {**tool_input, "file_path": "link_to_env"})
    assert through_link.get("permissionDecision") == "deny", through_link


def test_ordinary_work_in_a_subdirectory_still_passes(repo):
    for sub, command in (("src", "echo x > notes.txt"), ("config", "cat prod.yaml"), ("src", "rm -f app.py"),
                         ("src/deep", "echo '-- next' > 0002.sql")):
        output = _bash(repo, sub, command)
        assert output.get("permissionDecision") != "deny", (sub, command, output)
    write = _hook(repo, repo["work"] / "src", "Write", {"file_path": "new.py", "content": "x"})
    assert write.get("permissionDecision") != "deny"


def test_the_normalizer_resolves_every_path_against_the_cwd(repo):
    work = repo["work"]
    analysis = analyze_command("rm ../.env && echo x > prod.yaml", cwd=work / "config", workspace=work / "config")
    assert sorted((a.args["path"], a.args["inside_workspace"]) for a in analysis.actions) == [
        (str(work / ".env"), False), ("prod.yaml", True)]
    action = file_action("Write", {"file_path": str(work / ".env")}, cwd=work / "src", workspace=work / "src")
    assert action.args["path"] == str(work / ".env")


def test_the_invariants_compare_against_the_repository_root(repo):
    contract = builtin_contract()
    work = str(repo["work"])
    state = {"workspace.root": f"{work}/config", "workspace.repo_root": work, "fs.protected_paths": PROTECTED}
    write = {"tool": "fs", "operation": "fs.write", "args": {"path": "prod.yaml"}}
    names = {r.name for r in contract.check_invariants(write, state) if not r.holds}
    assert names == {"no_write_to_protected_path"}
    other = {"tool": "fs", "operation": "fs.write", "args": {"path": "dev.yaml"}}
    assert {r.name for r in contract.check_invariants(other, state) if not r.holds} == set()
    # Without the repository root the check cannot be made: it fails closed.
    unknown = {k: v for k, v in state.items() if k != "workspace.repo_root"}
    assert "no_write_to_protected_path" in {r.name for r in contract.check_invariants(other, unknown) if not r.holds}


def test_protected_names_reached_through_symlinks_stay_protected(repo, tmp_path):
    work = repo["work"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "prod.yaml").write_text("db: real\n")
    (work / "config" / "prod.yaml").unlink()
    (work / "config").rmdir()
    (work / "config").symlink_to(elsewhere)  # the protected config/prod.yaml now lives elsewhere
    (work / "secrets").mkdir()
    (work / "secrets" / "real.env").write_text("SECRET=2\n")
    (work / ".env").unlink()
    (work / ".env").symlink_to(work / "secrets" / "real.env")  # the protected .env is a symlink
    for sub, command in (("", "echo x > config/prod.yaml"), ("src", "echo x > ../config/prod.yaml"),
                         ("", "echo x > .env"), ("src", "sed -i s/2/3/ ../.env"), ("", "rm config/prod.yaml")):
        output = _bash(repo, sub, command)
        assert output.get("permissionDecision") == "deny", (sub, command, output)
    edit = _hook(repo, work / "src", "Edit", {"file_path": str(work / ".env"), "old_string": "2", "new_string": "3"})
    assert edit.get("permissionDecision") == "deny", edit
    assert (elsewhere / "prod.yaml").read_text() == "db: real\n"
    action = file_action("Write", {"file_path": ".env"}, cwd=work, workspace=work)
    assert action.args["path"] == "secrets/real.env" and action.args["link_path"] == ".env"
