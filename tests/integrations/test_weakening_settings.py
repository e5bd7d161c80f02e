"""Weakening settings need the developer (issue 25, item 3): `on-pass = "allow"` and another
`store` in the project's config.toml are honoured by the hook only while the file is the one the
developer approved with `statewise config approve` (outside the agent); a file new or changed
since is ignored for them, with a warning in the session note."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.integrations.installed import make_project


def _cli(project, *args, **extra_env):
    return subprocess.run([sys.executable, "-m", "statewise.cli", *args], cwd=project.work,
                          env={**project.env, **extra_env}, capture_output=True, text=True, timeout=120)


def _session(project) -> dict[str, object]:
    payload = {"session_id": "s1", "cwd": str(project.work), "hook_event_name": "SessionStart", "source": "startup"}
    from statewise.integrations.install import wrapper_path

    done = subprocess.run([str(wrapper_path(project=project.work)), "claude-code", "session"],
                          input=json.dumps(payload), capture_output=True, text=True, env=project.env, timeout=60)
    return json.loads(done.stdout)


def test_an_unapproved_on_pass_allow_is_ignored_then_honoured_once_approved_until_it_changes(tmp_path):
    project = make_project(tmp_path, protected=None)
    config = project.work / ".statewise" / "config.toml"
    config.write_text('on-pass = "allow"\n')  # brought in by a checkout, or written around the hook
    command = "echo x > notes.txt"
    assert project.bash(command).decision == "defer"
    assert "ignores on-pass = allow" in str(_session(project).get("systemMessage"))
    done = _cli(project, "config", "approve")
    assert done.returncode == 0, done.stderr
    assert project.bash(command).decision == "allow"
    config.write_text('on-pass = "allow"\n# changed\n')
    assert project.bash(command).decision == "defer"


def test_an_unapproved_store_is_not_used(tmp_path):
    project = make_project(tmp_path, protected=[".env", "migrations"])
    (project.work / ".statewise" / "config.toml").write_text('store = "build/empty.db"\n')
    answer = project.bash("rm -rf migrations")
    # the default store's record decides (an empty store would stop it only for want of a record)
    assert answer.decision == "deny" and "no_delete_of_protected_path" in answer.reason, answer


def test_the_agent_cannot_approve(tmp_path):
    project = make_project(tmp_path, protected=None)
    (project.work / ".statewise" / "config.toml").write_text('on-pass = "allow"\n')
    done = _cli(project, "config", "approve", CLAUDECODE="1")
    assert done.returncode != 0 and "only the developer" in done.stderr
    answer = project.bash("statewise config approve")
    assert answer.decision == "ask", answer


def test_doctor_reports_an_unapproved_weakening_setting(tmp_path, monkeypatch):
    from statewise.integrations.doctor import diagnose
    from statewise.settings import approve_config

    project = make_project(tmp_path, protected=None)
    monkeypatch.setenv("HOME", str(project.home))
    config = project.work / ".statewise" / "config.toml"
    config.write_text('on-pass = "allow"\n')

    def finding():
        return next(c for c in diagnose("claude-code", project=project.work, home=project.home)
                    if c.name == "project settings")

    assert not finding().ok and "ignores on-pass = allow" in finding().detail and not finding().fatal
    approve_config(config)
    assert finding().ok
