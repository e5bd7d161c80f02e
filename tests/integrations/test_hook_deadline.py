"""A hook call's total time stays below the client's timeout in every slow failure mode, through
the installed wrapper run the way the client runs it; before a tool runs the answer is a block.

The client timeout is installed at its minimum (10 s): the wrapper's watchdog is then at 6 s and
the hook's own deadline at 3 s. Claude Code, Codex and Gemini CLI all run the tool when a hook
outlives their timeout, so "bounded below it" is the property that matters."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from statewise.integrations.install import install_hooks, settings_path

CLIENT_TIMEOUT = 10


@pytest.fixture
def repo(tmp_path):
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "remote", "add", "origin", str(origin)], check=True)
    return work


def _run_pre(work, command, *, tmp_path, contract=None):
    store = str(tmp_path / "store.db")
    subprocess.run([sys.executable, "-m", "statewise", "--store", store, "init"], check=True, capture_output=True)
    install_hooks("claude-code", project=work, timeout=CLIENT_TIMEOUT, store=store,
                  contract=str(contract) if contract else None)
    hooks = json.loads(settings_path("claude-code", project=work).read_text())["hooks"]
    payload = json.dumps({"cwd": str(work), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": command}, "session_id": "s", "tool_use_id": "t"})
    env_cache = {"STATEWISE_CACHE_DIR": str(tmp_path / "cache")}
    started = time.monotonic()
    done = subprocess.run(["/bin/sh", "-c", hooks["PreToolUse"][-1]["hooks"][0]["command"]], input=payload,
                          capture_output=True, text=True, cwd=work, timeout=60,
                          env={**__import__("os").environ, **env_cache})
    return done, time.monotonic() - started


def _blocked(done):
    if done.returncode == 2:
        return True
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    return decision["permissionDecision"] == "deny"


def test_a_command_of_twenty_thousand_actions(repo, tmp_path):
    command = " && ".join(f"git push origin b{i}" for i in range(20000))
    done, elapsed = _run_pre(repo, command, tmp_path=tmp_path)
    assert _blocked(done) and elapsed < CLIENT_TIMEOUT - 1


def test_a_ten_megabyte_contract(repo, tmp_path):
    contract = tmp_path / "huge.yaml"
    padding = "".join(f"# {'x' * 90}\n" for _ in range(110_000))
    contract.write_text("name: huge\nversion: 1\nextends: coding\n" + padding)
    assert contract.stat().st_size > 10_000_000
    done, elapsed = _run_pre(repo, "git push origin main", tmp_path=tmp_path, contract=contract)
    assert _blocked(done) and elapsed < CLIENT_TIMEOUT - 1


def test_an_expensive_invariant(repo, tmp_path):
    numbers = "[" + ", ".join(str(i) for i in range(3000)) + "]"
    contract = tmp_path / "slow.yaml"
    contract.write_text(
        "name: slow\nversion: 1\n"
        "extends: coding\n"
        "invariants:\n"
        "  - name: very_slow_check\n"
        "    when: action.operation == \"git.push\"\n"
        f"    check: '{numbers}.all(x, {numbers}.all(y, x + y >= 0))'\n"
        "    message: A check that takes minutes to evaluate.\n"
    )
    done, elapsed = _run_pre(repo, "git push origin main", tmp_path=tmp_path, contract=contract)
    assert _blocked(done) and elapsed < CLIENT_TIMEOUT - 1
