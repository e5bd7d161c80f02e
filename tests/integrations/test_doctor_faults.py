"""statewise doctor tells the truth about the states that stop every guarded call or let tools run
unchecked: a locked, corrupt or tampered store, a git that hangs, a deleted virtual environment,
and an untrusted Codex project (with a fix that works). Real files, real processes, the real hook."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from statewise.integrations.doctor import BLOCKED, diagnose
from statewise.integrations.install import install_hooks, wrapper_path
from tests.integrations.installed import make_project


@pytest.fixture
def installed(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_NO_WARM", "1")
    monkeypatch.delenv("STATEWISE_STORE", raising=False)
    monkeypatch.delenv("STATEWISE_CONTRACT", raising=False)
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))
    return make_project(tmp_path, protected=["migrations"])


def _named(checks, name):
    found = [check for check in checks if check.name == name]
    assert found, [check.name for check in checks]
    return found[0]


def _fatal(checks):
    return {check.name: check.effect for check in checks if not check.ok and check.fatal}


def test_a_healthy_store_and_git_are_reported_as_such(installed):
    checks = diagnose("claude-code", project=installed.work)
    assert _fatal(checks) == {}
    assert _named(checks, "store").detail.startswith(f"the hook opens {installed.work / '.statewise' / 'store.db'} (")
    assert "`git --version` answered in" in _named(checks, "program git").detail


def test_a_store_another_connection_holds_locked_blocks_every_guarded_call(installed):
    store = installed.work / ".statewise" / "store.db"
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a real write transaction, held like an open sqlite3 shell
    try:
        checks = diagnose("claude-code", project=installed.work)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    lock = _named(checks, "store lock")
    assert not lock.ok and lock.fatal and lock.effect == BLOCKED == "every guarded call will be blocked"
    assert f"another process has held {store}'s write lock" in lock.detail and "fuser" in lock.fix
    assert _fatal(checks) == {"store lock": BLOCKED}
    # Released, the same store is fine again: the probe took and gave back the lock, nothing else.
    assert "store lock" not in _fatal(diagnose("claude-code", project=installed.work))


def test_a_corrupt_store_blocks_every_guarded_call_and_doctor_says_so(installed):
    store = installed.work / ".statewise" / "store.db"
    with open(store, "r+b") as handle:
        handle.write(b"this is not a database" * 50)
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    before = store.read_bytes()
    checks = diagnose("claude-code", project=installed.work)
    check = _named(checks, "store")
    assert not check.ok and check.effect == BLOCKED and "the hook cannot open the store" in check.detail
    assert "not an SQLite" in check.detail and f"mv {store} {store}.broken" in check.fix
    assert _fatal(checks) == {"store": BLOCKED}
    assert store.read_bytes() == before  # doctor only looked
    # The effect is real: the installed hook blocks a guarded call, and says why.
    answer = installed.bash("rm build/x")
    assert answer.decision == "deny" and "StoreCorruptError" in answer.reason


def test_a_store_with_two_active_records_for_one_key_is_refused_like_the_hook_refuses_it(installed):
    # `store check`'s first invariant, broken behind the store's back: the index dropped and a
    # second active copy of the protected-paths record written.
    store = installed.work / ".statewise" / "store.db"
    connection = sqlite3.connect(store)
    connection.execute("DROP INDEX sw_records_one_active")
    columns = [row[1] for row in connection.execute("PRAGMA table_info(sw_records)") if row[1] not in ("seq", "id")]
    connection.execute(f"INSERT INTO sw_records (id, {', '.join(columns)}) "
                       f"SELECT id || '-copy', {', '.join(columns)} FROM sw_records WHERE key = 'fs.protected_paths'")
    connection.commit()
    connection.close()
    check = _named(diagnose("claude-code", project=installed.work), "store")
    assert not check.ok and check.effect == BLOCKED and "fs.protected_paths" in check.detail, check
    answer = installed.bash("rm build/x")
    assert answer.decision == "deny" and "fs.protected_paths" in answer.reason


def test_a_git_that_hangs_is_run_with_its_timeout_and_reported_by_its_effect(installed, tmp_path, monkeypatch):
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nsleep 60\n")
    (fake / "git").chmod(0o755)
    root = installed.work
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    checks = diagnose("claude-code", project=root)
    git = _named(checks, "program git")
    assert not git.ok and git.fatal and git.effect == BLOCKED == "every guarded call will be blocked"
    assert git.detail.startswith("`git --version` did not finish within 5s (killed): the hook cannot tell a call's "
                                 "repository, so it cannot apply the records scoped to it (protected paths and "
                                 "branches) and denies the call")
    assert str(fake / "git") in git.fix
    # The effect is real. Before, the records scoped to the repository were silently not applied:
    # the delete of a protected path passed. Now the hook fails closed.
    installed.env["PATH"] = f"{fake}:/usr/bin:/bin"
    answer = installed.bash("rm migrations/0001.sql")
    assert answer.decision == "deny" and "cannot tell which repository this call is in" in answer.reason
    assert (root / "migrations" / "0001.sql").exists()


def test_a_deleted_virtual_environment_blocks_every_call_and_is_not_called_unchecked(installed, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    wrapper = wrapper_path(project=installed.work)
    text = wrapper.read_text()
    [named] = [line for line in text.splitlines() if line.startswith("python=")]  # the wrapper's interpreter
    wrapper.write_text(text.replace(named, f"python={venv / 'bin' / 'python'}", 1))
    shutil.rmtree(venv)  # the developer deleted the environment StateWise was installed from
    checks = diagnose("claude-code", project=installed.work)
    executable = _named(checks, "executable")
    assert not executable.ok and executable.effect == BLOCKED == "every guarded call will be blocked"
    harmless = _named(checks, "round trip")
    assert not harmless.ok and harmless.detail.startswith("a harmless call through the installed command: blocked")
    assert set(_fatal(checks).values()) == {BLOCKED}
    # The effect is real: the client's command blocks the call (the settings command's `|| exit 2`).
    settings = json.loads((installed.work / ".claude" / "settings.json").read_text())
    [command] = [hook["command"] for group in settings["hooks"]["PreToolUse"] for hook in group["hooks"]
                 if "statewise-hook" in hook["command"]]
    payload = json.dumps({"cwd": str(installed.work), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "rm build/x"}})
    done = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True,
                          cwd=installed.work, timeout=60)
    assert done.returncode == 2 and "StateWise blocked this call" in done.stderr and "is gone" in done.stderr


def test_the_cli_words_each_problem_by_its_effect(installed):
    store = installed.work / ".statewise" / "store.db"
    store.write_bytes(b"garbage" * 100)
    done = subprocess.run([sys.executable, "-m", "statewise", "doctor", "--agent", "claude-code", "--project",
                           str(installed.work)], capture_output=True, text=True, timeout=300, env=installed.env)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    failing = lines.index(next(line for line in lines if line.startswith("FAIL claude-code store:")))
    assert lines[failing + 1].strip() == "effect: every guarded call will be blocked"
    assert lines[-1] == "1 problem(s): every guarded call will be blocked"
    assert "no problem found" not in done.stdout


# --- Codex project trust: the fix must be the one that works ----------------------------------------


def _codex(project: Path, home: Path, monkeypatch, config: str) -> tuple[Path, list]:
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no codex: the trust settings alone are judged here
    monkeypatch.delenv("STATEWISE_CODEX", raising=False)
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    path = home / ".codex" / "config.toml"
    path.write_text(config)
    install_hooks("codex", project=project)
    return path, diagnose("codex", project=project, home=home)


@pytest.fixture
def codex_project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_a_trusted_parent_directory_is_not_trust_for_codex(codex_project, tmp_path, monkeypatch):
    # Codex 0.171 loads no project hook under a trusted parent (asked through codex app-server).
    _, checks = _codex(codex_project, tmp_path / "home", monkeypatch,
                       f'[projects."{codex_project.parent}"]\ntrust_level = "trusted"\n')
    trust = _named(checks, "project trust")
    assert not trust.ok and f'"{codex_project.parent}" does not count' in trust.detail
    assert trust.fix.endswith(f'[projects."{codex_project}"]\ntrust_level = "trusted"')


def test_the_fix_for_an_untrusted_project_makes_it_trusted_when_applied(codex_project, tmp_path, monkeypatch):
    home = tmp_path / "home"
    config, checks = _codex(codex_project, home, monkeypatch, 'model = "gpt-5.5"\n')
    trust = _named(checks, "project trust")
    assert not trust.ok and trust.fix.startswith(f"add to {config}:\n")
    with open(config, "a") as handle:
        handle.write(trust.fix.partition(":\n")[2] + "\n")
    assert _named(diagnose("codex", project=codex_project, home=home), "project trust").ok


def test_an_explicitly_untrusted_project_gets_an_edit_not_a_second_table(codex_project, tmp_path, monkeypatch):
    # Appending a second [projects."<dir>"] table (the old fix) makes the whole file unreadable.
    home = tmp_path / "home"
    config, checks = _codex(codex_project, home, monkeypatch,
                            f'[projects."{codex_project}"]\ntrust_level = "untrusted"\n\n[tui]\ntheme = "dark"\n')
    trust = _named(checks, "project trust")
    assert not trust.ok and 'marked trust_level = "untrusted"' in trust.detail
    assert trust.fix == f'in {config}, under [projects."{codex_project}"], set trust_level = "trusted"'
    appended = config.read_text() + f'[projects."{codex_project}"]\ntrust_level = "trusted"\n'
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(appended)
    config.write_text(re.sub(r'trust_level = "untrusted"', 'trust_level = "trusted"', config.read_text()))
    assert _named(diagnose("codex", project=codex_project, home=home), "project trust").ok


def test_a_fix_that_would_not_parse_is_never_printed(codex_project, tmp_path, monkeypatch):
    # `projects` written as an inline table: appending a [projects."<dir>"] table breaks the file.
    inline = 'projects = { "/elsewhere" = { trust_level = "trusted" } }\n'
    _, checks = _codex(codex_project, tmp_path / "home", monkeypatch, inline)
    trust = _named(checks, "project trust")
    assert not trust.ok and "[projects." not in trust.fix.partition("(")[0]
    assert trust.fix.startswith("edit ") and f'"{codex_project}" with trust_level = "trusted"' in trust.fix
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(inline + f'[projects."{codex_project}"]\ntrust_level = "trusted"\n')


def test_a_postgresql_store_that_cannot_be_reached_blocks_every_guarded_call(installed, monkeypatch):
    unreachable = "postgresql://postgres@127.0.0.1:1/statewise"  # port 1: nothing listens, refused at once
    monkeypatch.setenv("STATEWISE_STORE", unreachable)
    check = _named(diagnose("claude-code", project=installed.work), "store")
    assert not check.ok and check.effect == BLOCKED and "cannot connect" in check.detail, check
    installed.env["STATEWISE_STORE"] = unreachable
    answer = installed.bash("rm build/x")
    assert answer.decision == "deny" and "cannot connect" in answer.reason


def test_the_store_a_portable_wrapper_names_is_the_one_checked(installed, tmp_path):
    # `statewise install --store FILE` puts the store in the wrapper, which the committed settings
    # find by searching up from the project folder: doctor must read the store from that wrapper,
    # not from the settings command's first word (a shell assignment) or the default location.
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(b"garbage" * 100)
    install_hooks("claude-code", project=installed.work, store=str(elsewhere))
    checks = diagnose("claude-code", project=installed.work)
    store = _named(checks, "store")
    assert str(elsewhere) in store.detail, store.detail
    assert not store.ok and store.effect == BLOCKED
