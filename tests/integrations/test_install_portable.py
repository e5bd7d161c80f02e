"""A project where ``statewise install`` ran, committed, cloned or copied elsewhere: the settings a
team commits hold portable commands only, a copy still works, a clone on a machine where
StateWise is not set up says what to install on its first call (and is still blocked), and a
hook that stalls before Python even starts is blocked before the client's own timeout.

Everything runs for real: real git repositories and clones, the installed commands run through
/bin/sh with the client's JSON on stdin, in the folder and with the variables the client sets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewise.integrations.install import AGENTS, install_hooks, settings_path, wrapper_path
from tests.integrations.installed import client_env


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def _repository(tmp_path: Path, agent: str) -> Path:
    """A repository where the developer ran ``statewise install`` and committed what it wrote."""
    work = tmp_path / "alice" / "app"
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    (work / "README.md").write_text("app\n")
    (work / "src").mkdir()
    (work / "src" / "main.py").write_text("print('hi')\n")
    install_hooks(agent, project=work)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "app with StateWise hooks")
    return work


def _command(work: Path, agent: str, event: str) -> str:
    spec = AGENTS[agent]
    name = {"pre": spec.pre_event, "post": spec.post_events[0], "session": spec.session_event,
            "prompt": spec.prompt_event, "stop": spec.stop_event}[event]
    hooks = json.loads(settings_path(agent, project=work).read_text())["hooks"]
    return str(hooks[name][-1]["hooks"][0]["command"])


def _call(agent: str, work: Path, command: str, shell_command: str = "git status", *, cwd: Path | None = None,
          event: str = "PreToolUse") -> subprocess.CompletedProcess[str]:
    """Run ``command`` as the client runs it: /bin/sh -c in the session's folder, the client's
    project variable set to the project, the client's JSON on stdin."""
    tool = {"claude-code": "Bash", "codex": "Bash", "gemini": "run_shell_command"}[agent]
    payload = json.dumps({"cwd": str(cwd or work), "hook_event_name": event, "tool_name": tool,
                          "session_id": "s1", "tool_input": {"command": shell_command}})
    return subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True, timeout=60,
                          cwd=cwd or work, env=client_env(agent, work))


def _decision(agent: str, done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode == 2:
        return "block"
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    data = json.loads(done.stdout)
    if "decision" in data:
        return str(data["decision"])
    return str(data.get("hookSpecificOutput", {}).get("permissionDecision", "pass"))


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_committed_settings_hold_no_machine_path_and_the_wrapper_stays_out_of_git(agent, tmp_path):
    work = _repository(tmp_path, agent)
    tracked = _git(work, "ls-files").split()
    assert AGENTS[agent].project_file in tracked
    assert not any(name.startswith(".statewise/bin") for name in tracked)  # the machine's own part
    text = settings_path(agent, project=work).read_text()
    for machine in (str(work), str(tmp_path), sys.executable, str(Path(sys.executable).resolve()), str(Path.home())):
        assert machine not in text
    assert '"/' not in text and "'/" not in text  # no absolute path at all, quoted or not
    assert _git(work, "status", "--porcelain") == ""  # nothing install wrote is left untracked


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_copy_of_the_project_in_another_folder_still_guards(agent, tmp_path):
    work = _repository(tmp_path, agent)
    (work / ".env").write_text("SECRET=1\n")
    moved = tmp_path / "elsewhere" / "app copy"  # a blank in the path, too
    shutil.copytree(work, moved, symlinks=True)
    shutil.rmtree(work)  # the original folder is gone: nothing may still point at it
    command = _command(moved, agent, "pre")
    assert _decision(agent, _call(agent, moved, command)) == "pass"
    assert _decision(agent, _call(agent, moved, command, "rm .env")) in ("deny", "block")
    assert (moved / ".env").exists()
    # Codex runs hooks in the session's folder, which may be below the project's top.
    assert _decision(agent, _call(agent, moved, command, cwd=moved / "src")) == "pass"


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_clone_without_statewise_set_up_says_what_to_install_and_stays_blocked(agent, tmp_path):
    work = _repository(tmp_path, agent)
    clone = tmp_path / "bob" / "app"
    clone.parent.mkdir()
    _git(tmp_path, "clone", "-q", str(work), str(clone))
    assert not wrapper_path(project=clone).exists()  # the wrapper never travels with the repository
    done = _call(agent, clone, _command(clone, agent, "pre"), "rm -rf src")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"StateWise blocked this call: StateWise is not set up on this machine for this "
                           f"project (no .statewise/bin/statewise-hook in {clone} or above); install StateWise "
                           f"(pip install statewise) and run: statewise install {agent}\n")
    assert (clone / "src" / "main.py").exists()
    # Nothing to block at the other events: an empty answer, no error (the first tool call says it).
    for event in ("post", "session", "prompt", "stop"):
        done = _call(agent, clone, _command(clone, agent, event), "python3 --version")
        assert (done.returncode, done.stdout, done.stderr) == (0, "{}\n", "")
    # What the message says to do is what makes it work.
    install_hooks(agent, project=clone)
    assert _git(clone, "status", "--porcelain") == ""  # settings unchanged: the same portable commands
    assert _decision(agent, _call(agent, clone, _command(clone, agent, "pre"))) == "pass"


def _stalling_python(tmp_path: Path) -> Path:
    """An interpreter that never gets to run Python: it sleeps (exec, so the kill reaches it)."""
    fake = tmp_path / "stalled" / "python3"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexec sleep 120\n")
    fake.chmod(0o755)
    return fake


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_hook_that_stalls_before_python_runs_is_blocked_before_the_clients_timeout(agent, tmp_path):
    work = tmp_path / "app"
    work.mkdir()
    install_hooks(agent, project=work, timeout=10, interpreter=_stalling_python(tmp_path))
    started = time.monotonic()
    done = _call(agent, work, _command(work, agent, "pre"), "rm -rf src")
    elapsed = time.monotonic() - started
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "StateWise blocked this call: the hook did not answer within 6 s" in done.stderr
    assert 5.5 < elapsed < 10  # the wrapper's deadline, before the client's 10 s timeout
    after = _call(agent, work, _command(work, agent, "post"), "python3 --version", event="PostToolUse")
    assert (after.returncode, after.stdout) == (0, "{}\n")


def test_the_watchdog_is_gone_once_the_hook_answered(tmp_path):
    install_hooks("claude-code", project=tmp_path, timeout=41)
    script = wrapper_path(project=tmp_path).read_text()
    assert "\n    sleep 37 &\n" in script
    done = _call("claude-code", tmp_path, _command(tmp_path, "claude-code", "pre"))
    assert done.returncode == 0
    # Each watchdog sleeps the deadline, 37 s: none may outlive the hook it watched. (The listing
    # is the whole machine's, and the stalled-hook tests' watchdogs sleep 6 s: this deadline is a
    # length no other test uses.)
    time.sleep(0.2)
    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert "sleep 37" not in listing.splitlines()


def test_the_wrapper_compiles_without_warnings(tmp_path):
    install_hooks("codex", project=tmp_path)
    done = subprocess.run([sys.executable, "-W", "error", "-c",
                           "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
                           str(wrapper_path(project=tmp_path))], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_user_settings_name_the_wrapper_by_its_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path, _ = install_hooks("claude-code", user=True)
    command = _command_at(path, "PreToolUse")
    assert command.startswith(f"{wrapper_path(user=True)} claude-code pre || ")
    assert not (tmp_path / "home" / ".statewise" / ".gitignore").exists()  # not a project: no .gitignore


def _command_at(path: Path, event: str) -> str:
    return str(json.loads(path.read_text())["hooks"][event][-1]["hooks"][0]["command"])


def test_install_keeps_a_gitignore_the_developer_wrote(tmp_path):
    ignore = tmp_path / ".statewise" / ".gitignore"
    ignore.parent.mkdir()
    ignore.write_text("store.db\nbin/\n")
    install_hooks("gemini", project=tmp_path)
    assert ignore.read_text() == "store.db\nbin/\n"
    assert os.access(wrapper_path(project=tmp_path), os.X_OK)


# --- statewise doctor reads the same installation the way the client will ----------------------


def _checks(agent, root, **options):
    from statewise.integrations.doctor import diagnose

    return {check.name: check for check in diagnose(agent, project=root, **options)}


def test_doctor_on_a_clone_without_the_wrapper_says_what_to_install(tmp_path):
    work = _repository(tmp_path, "claude-code")
    clone = tmp_path / "bob" / "app"
    clone.parent.mkdir()
    _git(tmp_path, "clone", "-q", str(work), str(clone))
    wrapper = _checks("claude-code", clone, home=tmp_path / "home")["wrapper"]
    assert not wrapper.ok and wrapper.fatal
    assert f"there is none in {clone} or above on this machine" in wrapper.detail
    assert "every guarded call is blocked" in wrapper.detail
    assert wrapper.fix == f"install StateWise on this machine, then run: statewise install claude-code --project {clone}"


def _old_settings(root: Path, agent: str, wrapper: Path) -> None:
    """What an older StateWise wrote into the project's settings: the wrapper by absolute path."""
    spec = AGENTS[agent]
    path = settings_path(agent, project=root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": spec.entries(wrapper, 30)}))


def test_doctor_recognises_settings_written_on_another_machine(tmp_path):
    root = tmp_path / "app"
    root.mkdir()
    _git(root, "init", "-q")
    _old_settings(root, "gemini", Path("/home/alice/src/app/.statewise/bin/statewise-hook"))
    wrapper = _checks("gemini", root, home=tmp_path / "home")["wrapper"]
    assert not wrapper.ok
    assert wrapper.detail == ("the settings name /home/alice/src/app/.statewise/bin/statewise-hook, which is not on this "
                              "machine: they were written on another machine or before the project moved; every "
                              "guarded call is blocked")
    assert wrapper.fix == (f"statewise install gemini --project {root} (it writes portable commands: commit the "
                           "settings it changes)")
    install_hooks("gemini", project=root)  # the fix it names
    checks = _checks("gemini", root, home=tmp_path / "home")
    assert checks["wrapper"].ok and "portable settings" not in checks


def test_doctor_warns_about_absolute_paths_in_a_projects_settings_and_an_old_wrapper(tmp_path):
    root = tmp_path / "app"
    root.mkdir()
    install_hooks("codex", project=root)
    wrapper = wrapper_path(project=root)
    _old_settings(root, "codex", wrapper)
    # The Python-only wrapper an older StateWise wrote: no alarm before Python runs.
    body = wrapper.read_text().split("\n'''\n", 1)[1]
    wrapper.write_text(f"#!{sys.executable} -IS\n{body}")
    checks = _checks("codex", root, home=tmp_path / "home")
    assert checks["wrapper"].ok
    portable = checks["portable settings"]
    assert not portable.ok and not portable.fatal and f"absolute path {wrapper}" in portable.detail
    watchdog = checks["watchdog"]
    assert not watchdog.ok and watchdog.fatal and "the client then runs the tool unchecked" in watchdog.detail
