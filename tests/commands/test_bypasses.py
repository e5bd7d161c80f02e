"""The bypass catalogue of the shell normalizer.

Every way of writing a guarded effect that we know of is a case here, and each must be
normalized to the right operation and arguments (CASES) or fail closed with a
``shell.unresolved`` action (FAIL_CLOSED). Plainly read-only commands give nothing
(READ_ONLY); parsed commands the contract does not guard are listed as unguarded
(UNGUARDED). To add a bypass you found: add a line to the right list (bypass_cases.py,
bypass_lists.py); see docs/shell.md.

The commands run against a real git repository (branches main, feature (current, tracking
origin/feature) and a remote-only branch stale; tag v1), a fake virtual environment and a
PATH holding fake ``pip``/``python`` programs, so nothing depends on the machine.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from statewise.actions import Action
from statewise.commands import UNRESOLVED, ShellAnalysis, analyze_command, file_action
from statewise.contract import builtin_contract
from tests.commands.bypass_cases import ABSENT, CASES, FAKE_PIP_PYTHON
from tests.commands.bypass_lists import FAIL_CLOSED, READ_ONLY, UNGUARDED


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)},
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A repository with a remote, a venv, some files, and a fake PATH."""
    tmp = Path(os.path.realpath(tmp_path_factory.mktemp("shell")))
    remote = tmp / "remote.git"
    remote.mkdir()
    _git(remote, "init", "-q", "--bare")
    repo = tmp / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("hello\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    _git(repo, "tag", "v1")
    _git(repo, "remote", "add", "origin", str(remote))
    _git(repo, "push", "-q", "origin", "main")
    _git(repo, "branch", "stale")
    _git(repo, "push", "-q", "origin", "stale")
    _git(repo, "branch", "-D", "stale")
    _git(repo, "checkout", "-q", "-b", "feature")
    _git(repo, "push", "-q", "-u", "origin", "feature")
    _git(repo, "branch", "old")
    (repo / "build").mkdir()
    (repo / "a.log").write_text("a")
    (repo / "b.log").write_text("b")
    venv_bin = repo / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for name in ("python", "pip"):
        (venv_bin / name).write_text("#!/bin/sh\n")
        (venv_bin / name).chmod(0o755)
    (tmp / "outside").mkdir()
    (repo / "outside_link").symlink_to(tmp / "outside")
    (repo / "src" / "protected_link").symlink_to(repo / ".git" / "config")
    fake_bin = tmp / "bin"
    fake_bin.mkdir()
    for name in ("pip", "pip3"):
        (fake_bin / name).write_text(f"#!{FAKE_PIP_PYTHON}\nimport pip\n")
        (fake_bin / name).chmod(0o755)
    for name in ("python", "python3"):
        (fake_bin / name).write_text("#!/bin/sh\n")
        (fake_bin / name).chmod(0o755)
    home = tmp / "home"
    home.mkdir()
    detached = tmp / "detached"
    detached.mkdir()
    _git(detached, "init", "-q", "-b", "main")
    (detached / "f").write_text("f")
    _git(detached, "add", "-A")
    _git(detached, "commit", "-q", "-m", "one")
    _git(detached, "checkout", "-q", "--detach")
    lonely = tmp / "lonely"
    lonely.mkdir()
    _git(lonely, "init", "-q", "-b", "solo")
    (lonely / "f").write_text("f")
    _git(lonely, "add", "-A")
    _git(lonely, "commit", "-q", "-m", "one")
    (tmp / "notgit").mkdir()
    return {"tmp": tmp, "repo": repo, "home": home, "bin": fake_bin, "detached": detached, "lonely": lonely,
            "notgit": tmp / "notgit"}


@pytest.fixture(scope="module")
def env(world: dict[str, Path]) -> dict[str, str]:
    return {"HOME": str(world["home"]), "PATH": str(world["bin"])}


def run(world: dict[str, Path], env: dict[str, str], command: str, cwd: str = "repo") -> ShellAnalysis:
    return analyze_command(command, cwd=world[cwd], workspace=world["repo"], env=env)


def fill(value: Any, world: dict[str, Path]) -> Any:
    if isinstance(value, str):
        for name in ("tmp", "repo", "home", "bin"):
            value = value.replace("{" + name + "}", str(world[name]))
        return value
    if isinstance(value, list):
        return [fill(v, world) for v in value]
    return value



def _describe(analysis: ShellAnalysis) -> str:
    return "; ".join(action.describe() + (f" [{action.reason}]" if action.operation == UNRESOLVED else "")
                     for action in analysis.actions) or "(no action)"


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[c for c, _ in CASES])
def test_normalized(world, env, command, expected):
    analysis = run(world, env, fill(command, world))
    expected = fill(expected, world)
    want_unresolved = [e for e in expected if e[0] == UNRESOLVED]
    if not want_unresolved:
        assert analysis.unresolved == (), _describe(analysis)
    got = [(a.operation, a.args) for a in analysis.actions if want_unresolved or a.operation != UNRESOLVED]
    assert [op for op, _ in got] == [op for op, _ in expected], _describe(analysis)
    for (_, args), (_, wanted) in zip(got, expected, strict=True):
        for name, value in wanted.items():
            if value is ABSENT:
                assert name not in args, f"{name} should be absent: {_describe(analysis)}"
            else:
                assert args.get(name) == fill(value, world), f"{name}: {_describe(analysis)}"
    assert analysis.read_only is False if expected else True


@pytest.mark.parametrize("command", FAIL_CLOSED)
def test_fail_closed(world, env, command):
    analysis = run(world, env, command)
    assert UNRESOLVED in analysis.operations, _describe(analysis)
    assert analysis.unresolved, _describe(analysis)
    assert analysis.read_only is False
    unresolved = [a for a in analysis.actions if a.operation == UNRESOLVED]
    assert len(unresolved) == len(analysis.unresolved)
    for action in unresolved:
        assert action.args["command"] == command
        assert action.reason
        assert action.risk == "high"
    # unresolved actions come first, so a hook stopping at the first stop shows the reason
    assert analysis.actions[0].operation == UNRESOLVED


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only(world, env, command):
    analysis = run(world, env, command)
    assert analysis.actions == (), _describe(analysis)
    assert analysis.unguarded == ()
    assert analysis.read_only is True


@pytest.mark.parametrize("command", UNGUARDED)
def test_unguarded(world, env, command):
    analysis = run(world, env, command)
    assert analysis.actions == (), _describe(analysis)
    assert analysis.unguarded, "should be listed as unguarded"
    assert analysis.read_only is False


# --- the repository decides ------------------------------------------------------------------


def test_push_from_a_detached_head_is_unresolved(world, env):
    for command in ("git push", "git push origin HEAD", "git push -f origin HEAD"):
        analysis = run(world, env, command, cwd="detached")
        assert analysis.operations == (UNRESOLVED,), _describe(analysis)
        assert "detached" in analysis.unresolved[0]


def test_push_outside_a_repository_is_unresolved(world, env):
    analysis = run(world, env, "git push", cwd="notgit")
    assert analysis.operations == (UNRESOLVED,)
    assert "not a git repository" in analysis.unresolved[0]


def test_push_with_an_explicit_refspec_needs_no_repository(world, env):
    analysis = run(world, env, "git push -f origin main", cwd="notgit")
    assert analysis.operations == ("git.push",)
    assert analysis.actions[0].args["branch"] == "main"


def test_rebase_without_an_upstream_is_unresolved(world, env):
    analysis = run(world, env, "git rebase", cwd="lonely")
    assert analysis.operations == (UNRESOLVED,), _describe(analysis)


def test_push_uses_the_configured_push_remote(world, env):
    repo = world["lonely"]
    _git(repo, "remote", "add", "upstream", str(world["tmp"] / "remote.git"))
    _git(repo, "config", "remote.pushDefault", "upstream")
    try:
        analysis = run(world, env, "git push", cwd="lonely")
        assert [(a.args["remote"], a.args["branch"]) for a in analysis.actions] == [("upstream", "solo")]
    finally:
        _git(repo, "config", "--unset", "remote.pushDefault")
        _git(repo, "remote", "remove", "upstream")


def test_push_uses_configured_push_refspecs(world, env):
    repo = world["lonely"]
    _git(repo, "remote", "add", "origin", str(world["tmp"] / "remote.git"))
    _git(repo, "config", "remote.origin.push", "+refs/heads/solo:refs/heads/main")
    try:
        analysis = run(world, env, "git push origin", cwd="lonely")
        assert len(analysis.actions) == 1
        assert analysis.actions[0].args == {"remote": "origin", "branch": "main", "source": "refs/heads/solo",
                                            "force": True}
    finally:
        _git(repo, "remote", "remove", "origin")


def test_previous_branch_after_an_unknown_checkout_is_unknown(world, env):
    analysis = run(world, env, "git checkout --detach HEAD~0 && git push")
    assert UNRESOLVED in analysis.operations


# --- shape of the result ------------------------------------------------------------------------


def test_unresolved_action_carries_the_reason_and_the_raw_command(world, env):
    analysis = run(world, env, "eval \"$X\" && ls")
    action = analysis.actions[0]
    assert action.operation == UNRESOLVED
    assert action.tool == "shell"
    assert action.args["command"] == "eval \"$X\" && ls"
    assert action.args["part"] == "eval \"$X\""
    assert "eval" in action.reason
    assert analysis.unresolved == (action.reason,)


def test_everything_is_reported_not_just_the_first_problem(world, env):
    analysis = run(world, env, "rm -rf build && $CMD && git push -f origin main")
    assert analysis.operations == (UNRESOLVED, "fs.delete", "git.push")


def test_the_analysis_is_frozen(world, env):
    analysis = run(world, env, "ls")
    with pytest.raises(FrozenInstanceError):
        analysis.read_only = False  # type: ignore[misc]
    assert isinstance(analysis.actions, tuple)


def test_defaults_workspace_to_cwd_and_env_to_the_process(world):
    analysis = analyze_command("rm -rf build ../x", cwd=world["repo"])
    assert [a.args["path"] for a in analysis.actions] == ["build", str(world["tmp"] / "x")]


def test_risk_and_tool_follow_the_contract(world, env):
    contract = builtin_contract()
    for command, _ in CASES:
        for action in run(world, env, fill(command, world)).actions:
            spec = contract.operation(action.operation)
            if spec is None:
                continue
            assert contract.operation_name(action.tool, action.operation) == action.operation
            assert action.tool == spec.tool, action.describe()


UNDECLARED = {UNRESOLVED}  # every other operation the normalizer yields is declared by the built-in contract


def test_only_documented_operations_are_left_undeclared(world, env):
    contract = builtin_contract()
    produced = {a.operation for command, _ in CASES for a in run(world, env, fill(command, world)).actions}
    undeclared = {op for op in produced if contract.operation(op) is None}
    assert undeclared <= UNDECLARED
    assert contract.operation(UNRESOLVED) is None
    assert contract.operation_name("shell", UNRESOLVED) is None
    assert contract.operation_name("fs", UNRESOLVED) is None


def test_the_contract_invariants_read_the_paths(world, env):
    """Paths are in the form the invariants resolve against workspace.root."""
    contract = builtin_contract()
    # git.ignored[build]: build output is disposable only when known to be (absence is not permission).
    state = {"workspace.root": str(world["repo"]), "workspace.repo_root": str(world["repo"]),
             "fs.protected_paths": [".git", ".env"], "git.ignored[build]": True}

    def violated(command: str) -> set[str]:
        names: set[str] = set()
        for action in run(world, env, command).actions:
            names.update(v.name for v in contract.violations(action, state))
        return names

    assert violated("rm -rf build") == set()
    assert "no_recursive_delete_outside_workspace" in violated("rm -rf ~/projects")
    assert "no_recursive_delete_outside_workspace" in violated("rm -rf .")
    assert "no_recursive_delete_outside_workspace" in violated("cd .. && rm -rf repo")
    assert "no_recursive_delete_outside_workspace" in violated("rm -rf outside_link/")
    assert "no_delete_of_protected_path" in violated("rm -rf .git/hooks")
    assert "no_write_to_protected_path" in violated("echo x >> .env")
    assert "no_write_to_protected_path" in violated("echo x > src/protected_link")
    assert "no_write_to_protected_path" in violated("cp a.log .git/config")


# --- Edit / Write tool inputs ----------------------------------------------------------------------


def test_write_inside_the_workspace_is_relative(world):
    action = file_action("Write", {"file_path": "src/new.py", "content": "x"}, cwd=world["repo"],
                         workspace=world["repo"])
    assert action.operation == "fs.write"
    assert action.tool == "fs"
    assert action.args == {"path": "src/new.py", "inside_workspace": True, "via": "Write"}
    assert action.target == "src/new.py"


def test_edit_with_an_absolute_path_inside_the_workspace(world):
    action = file_action("Edit", {"file_path": str(world["repo"] / "src" / "app.py"), "old_string": "a",
                                  "new_string": "b"}, cwd=world["tmp"], workspace=world["repo"])
    assert action.args["path"] == "src/app.py"
    assert action.args["inside_workspace"] is True


def test_edit_outside_the_workspace_is_absolute(world):
    action = file_action("Edit", {"file_path": "../outside/x.txt"}, cwd=world["repo"], workspace=world["repo"])
    assert action.args["path"] == str(world["tmp"] / "outside" / "x.txt")
    assert action.args["inside_workspace"] is False


def test_write_through_a_symlink_is_the_target(world):
    action = file_action("Write", {"file_path": "outside_link/x"}, cwd=world["repo"], workspace=world["repo"])
    assert action.args["path"] == str(world["tmp"] / "outside" / "x")
    assert action.args["inside_workspace"] is False
    action = file_action("Write", {"file_path": "src/protected_link"}, cwd=world["repo"], workspace=world["repo"])
    assert action.args["path"] == ".git/config"


def test_write_to_home(world, monkeypatch):
    monkeypatch.setenv("HOME", str(world["home"]))
    action = file_action("Write", {"file_path": "~/.bashrc"}, cwd=world["repo"], workspace=world["repo"])
    assert action.args["path"] == str(world["home"] / ".bashrc")


def test_multiedit_and_notebookedit(world):
    action = file_action("MultiEdit", {"file_path": "src/app.py", "edits": [{"old_string": "a", "new_string": "b"}] * 2},
                         cwd=world["repo"], workspace=world["repo"])
    assert action.args == {"path": "src/app.py", "inside_workspace": True, "via": "MultiEdit", "edits": 2}
    action = file_action("NotebookEdit", {"notebook_path": "nb.ipynb", "new_source": "x"}, cwd=world["repo"],
                         workspace=world["repo"])
    assert action.args["path"] == "nb.ipynb"


def test_gemini_and_other_path_keys(world):
    for key in ("file_path", "path", "absolute_path"):
        action = file_action("write_file", {key: "a.txt", "content": ""}, cwd=world["repo"], workspace=world["repo"])
        assert action.args["path"] == "a.txt"


def test_file_input_without_a_path_fails_closed(world):
    action = file_action("Edit", {"old_string": "a"}, cwd=world["repo"], workspace=world["repo"])
    assert action.operation == UNRESOLVED
    assert "path" in action.reason
    assert isinstance(action, Action)


def test_the_workspace_defaults_to_cwd(world):
    action = file_action("Write", {"file_path": "x"}, cwd=world["repo"] / "src")
    assert action.args["path"] == "x"


def test_every_fact_a_reader_reports_is_in_its_readings_catalogue(world, env):
    # A contract's `when` may test only catalogued facts (statewise.contract.readings), so the
    # catalogue must name every fact the readers really report (the built-in rules map each
    # reading to the operation of the same name).
    from statewise.contract.readings import READINGS

    seen: set[str] = set()
    for command, _ in CASES:
        for action in run(world, env, fill(command, world)).actions:
            if action.operation in READINGS:
                seen.add(action.operation)
                extra = set(action.args) - set(READINGS[action.operation].facts)
                assert not extra, f"{action.operation} reports {sorted(extra)} ({command})"  # noqa: PT018
    assert seen == set(READINGS)  # and the bypass catalogue exercises every reading


def test_an_editor_that_does_nothing_opens_no_session(tmp_path):
    # git's order: GIT_SEQUENCE_EDITOR / sequence.editor (todo list only), GIT_EDITOR,
    # core.editor, VISUAL, EDITOR; Claude Code's Bash tool has GIT_EDITOR=true.
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    base = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}

    def interactive(command: str, **env: str) -> bool:
        analysis = analyze_command(command, cwd=repo, env={**base, **env})
        return any("editor" in reason for reason in analysis.unresolved)
    assert interactive("git commit") and interactive("git rebase -i HEAD~1")
    assert not interactive("git commit", GIT_EDITOR="true")
    assert not interactive("git rebase -i --autosquash HEAD~1", GIT_EDITOR="true")
    assert not interactive("git rebase -i HEAD~1", EDITOR=":")
    assert interactive("git commit", GIT_EDITOR="vim", EDITOR="true")  # GIT_EDITOR comes first
    subprocess.run(["git", "-C", str(repo), "config", "sequence.editor", "vim"], check=True)
    assert interactive("git rebase -i HEAD~1", GIT_EDITOR="true")     # the todo list's own editor
    assert not interactive("git commit", GIT_EDITOR="true")
    subprocess.run(["git", "-C", str(repo), "config", "core.editor", "true"], check=True)
    assert not interactive("git commit")
