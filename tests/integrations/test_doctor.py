"""statewise doctor catches each way an installation fails open, on real files and real processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from statewise.integrations.doctor import diagnose
from statewise.integrations.install import AGENTS, install_hooks, settings_path, wrapper_path


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _failed(checks):
    return {check.name for check in checks if not check.ok and check.fatal}


def _trust_everything(root, home, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(f'[projects."{root}"]\ntrust_level = "trusted"\n')
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(root): "TRUST_FOLDER"}))


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_good_installation_passes_with_a_measured_round_trip(agent, project, tmp_path, monkeypatch):
    _trust_everything(project, tmp_path / "home", monkeypatch)
    install_hooks(agent, project=project)
    checks = diagnose(agent, project=project, home=tmp_path / "home")
    assert _failed(checks) == set()
    trips = [check.detail for check in checks if check.name == "round trip"]
    assert len(trips) == 2 and "passed (exit 0)" in trips[0] and "blocked" in trips[1] and " ms" in trips[0]


def test_no_installation_is_a_failure_with_the_install_command(project):
    [check] = diagnose("claude-code", project=project)
    assert not check.ok and check.name == "settings" and "statewise install claude-code" in check.fix


def test_settings_that_do_not_parse(project):
    path = settings_path("claude-code", project=project)
    path.parent.mkdir()
    path.write_text("{oops")
    [check] = diagnose("claude-code", project=project)
    assert not check.ok and "does not parse" in check.detail


def test_a_legacy_bare_command_fails_open_when_statewise_is_not_on_path(project):
    path = settings_path("claude-code", project=project)
    path.parent.mkdir()
    hook = {"type": "command", "command": "statewise hook claude-code", "timeout": 60}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}))
    [check] = diagnose("claude-code", project=project)
    assert not check.ok and "bare `statewise hook`" in check.detail


def test_a_missing_wrapper_or_program_is_caught(project, tmp_path):
    install_hooks("claude-code", project=project, executable=tmp_path / "gone")
    assert "executable" in _failed(diagnose("claude-code", project=project))
    wrapper_path(project=project).unlink()
    assert "wrapper" in _failed(diagnose("claude-code", project=project))


def test_a_program_that_cannot_import_statewise_is_caught(project, tmp_path):
    install_hooks("claude-code", project=project)
    wrapper = wrapper_path(project=project)
    # The package directory the wrapper adds no longer holds StateWise (it moved, or was uninstalled).
    (tmp_path / "empty").mkdir()
    import statewise

    package = str(Path(statewise.__file__).resolve().parent.parent)
    wrapper.write_text(wrapper.read_text().replace(repr(package), repr(str(tmp_path / "empty"))))
    [executable] = [c for c in diagnose("claude-code", project=project) if c.name == "executable"]
    assert not executable.ok and "cannot import statewise" in executable.detail


def test_an_interpreter_without_statewises_dependencies_is_caught(project, tmp_path):
    install_hooks("claude-code", project=project)
    wrapper = wrapper_path(project=project)
    # StateWise's own files are found, but the interpreter is a copy without site-packages
    # (a fresh venv): the fast path would work and every guarded call would fail.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    bare = tmp_path / "bare" / "bin" / "python"
    wrapper.write_text(wrapper.read_text().replace(wrapper.read_text().splitlines()[0], f"#!{bare} -IS"))
    [executable] = [c for c in diagnose("claude-code", project=project) if c.name == "executable"]
    assert not executable.ok and "dependencies" in executable.detail


def test_a_gemini_timeout_written_in_seconds_is_caught(project, tmp_path, monkeypatch):
    _trust_everything(project, tmp_path / "home", monkeypatch)
    install_hooks("gemini", project=project)
    path = settings_path("gemini", project=project)
    data = json.loads(path.read_text())
    data["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] = 60  # what older installs wrote: 60 ms
    path.write_text(json.dumps(data))
    [timeout] = [c for c in diagnose("gemini", project=project, home=tmp_path / "home") if c.name == "timeout"]
    assert not timeout.ok and "milliseconds" in timeout.detail


def test_a_matcher_that_misses_a_guarded_tool_is_caught(project):
    install_hooks("claude-code", project=project)
    path = settings_path("claude-code", project=project)
    data = json.loads(path.read_text())
    data["hooks"]["PreToolUse"][0]["matcher"] = "Bash"
    path.write_text(json.dumps(data))
    [matcher] = [c for c in diagnose("claude-code", project=project) if c.name == "matcher"]
    assert not matcher.ok and "Write" in matcher.detail


def test_codex_project_trust_is_required(project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    install_hooks("codex", project=project)
    [trust] = [c for c in diagnose("codex", project=project, home=tmp_path) if c.name == "project trust"]
    assert not trust.ok and 'trust_level = "trusted"' in trust.fix


def test_without_codex_on_path_hook_trust_is_reported_as_unknown(project, tmp_path, monkeypatch):
    # Asking the real Codex is in tests/e2e (test_doctor_asks_the_real_codex_which_hooks_it_trusts).
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("STATEWISE_CODEX", raising=False)
    install_hooks("codex", project=project)
    [trust] = [c for c in diagnose("codex", project=project, home=tmp_path) if c.name == "hook trust"]
    assert not trust.ok and not trust.fatal and "cannot be asked" in trust.detail


def test_gemini_trusted_folder_is_required(project, tmp_path):
    install_hooks("gemini", project=project)
    [trust] = [c for c in diagnose("gemini", project=project, home=tmp_path) if c.name == "trusted folder"]
    assert not trust.ok and "TRUST_FOLDER" in trust.fix


def test_a_hook_that_lets_a_broken_call_through_fails_the_round_trip(project, tmp_path):
    always_pass = tmp_path / "always-pass"
    always_pass.write_text("#!/bin/sh\ncat >/dev/null\necho '{}'\n")
    always_pass.chmod(0o755)
    install_hooks("claude-code", project=project, executable=always_pass)
    trips = [c for c in diagnose("claude-code", project=project) if c.name == "round trip"]
    assert [c.ok for c in trips] == [True, False]


def test_the_cli_exits_non_zero_and_prints_json(project):
    done = subprocess.run([sys.executable, "-m", "statewise", "doctor", "--agent", "gemini", "--project",
                           str(project), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False and report["checks"][0]["name"] == "settings"


def test_a_wrapper_started_through_the_shell_is_read_too(project, tmp_path):
    from statewise.integrations.install import render_wrapper

    long_named = tmp_path / ("p" * 70) / ("q" * 60) / "python"
    long_named.parent.mkdir(parents=True)
    long_named.symlink_to(sys.executable)
    install_hooks("claude-code", project=project)
    wrapper_path(project=project).write_text(render_wrapper(timeout=30, interpreter=long_named))
    checks = diagnose("claude-code", project=project)
    assert _failed(checks) == set()
    [executable] = [c for c in checks if c.name == "executable"]
    assert str(long_named) in executable.detail
    long_named.unlink()
    assert "executable" in _failed(diagnose("claude-code", project=project))


@pytest.mark.parametrize("option", [{"async": True}, {"asyncRewake": True}, {"once": True}, {"if": "Bash(git push *)"}])
def test_a_pre_tool_hook_the_client_does_not_wait_for_is_caught(project, option):
    install_hooks("claude-code", project=project)
    [synchronous] = [c for c in diagnose("claude-code", project=project) if c.name == "synchronous"]
    assert synchronous.ok and "PreToolUse" in synchronous.detail
    path = settings_path("claude-code", project=project)
    data = json.loads(path.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"][0].update(option)
    path.write_text(json.dumps(data))
    checks = diagnose("claude-code", project=project)
    [synchronous] = [c for c in checks if c.name == "synchronous"]
    assert not synchronous.ok and synchronous.fatal and next(iter(option)) in synchronous.detail
    assert "synchronous" in _failed(checks) and "statewise install claude-code" in synchronous.fix


def test_a_pre_tool_hook_that_is_missing_is_caught_even_with_the_post_tool_hooks_in_place(project):
    install_hooks("claude-code", project=project)
    path = settings_path("claude-code", project=project)
    data = json.loads(path.read_text())
    del data["hooks"]["PreToolUse"]
    path.write_text(json.dumps(data))
    [check] = diagnose("claude-code", project=project)
    assert not check.ok and check.fatal and "no StateWise PreToolUse hook" in check.detail


def _captures(checks):
    return [check for check in checks if check.name == "post-tool capture"]


def test_async_post_tool_hooks_are_reported_without_failing_the_installation(project):
    install_hooks("claude-code", project=project)
    assert all(check.ok for check in _captures(diagnose("claude-code", project=project)))
    path = settings_path("claude-code", project=project)
    data = json.loads(path.read_text())
    for event in ("PostToolUse", "PostToolUseFailure"):
        data["hooks"][event][0]["hooks"][0]["async"] = True
    path.write_text(json.dumps(data))
    checks = diagnose("claude-code", project=project)
    captures = [c for c in _captures(checks) if not c.ok]
    assert len(captures) == 2 and all(not c.fatal for c in captures)
    assert "kills it" in captures[0].detail and _failed(checks) == set()


def test_post_tool_filters_that_cover_every_observation_rule_are_accepted(project):
    install_hooks("claude-code", project=project)
    captures = _captures(diagnose("claude-code", project=project))
    assert [c.ok for c in captures] == [True, True], captures
    assert "Bash(*push*)" in captures[0].detail and "PostToolUse hooks" in captures[0].detail


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_shell_post_tool_filter_is_read_back_from_the_command(agent, project):
    install_hooks(agent, project=project)
    [capture] = _captures(diagnose(agent, project=project))
    assert capture.ok and "payload holds push or python or node or npm" in capture.detail, capture
    # A literal taken out of the command by hand: that rule's commands no longer reach the hook.
    path = settings_path(agent, project=project)
    data = json.loads(path.read_text())
    [event] = AGENTS[agent].post_events
    hook = data["hooks"][event][0]["hooks"][0]
    hook["command"] = hook["command"].replace("|*'npm'*", "")
    path.write_text(json.dumps(data))
    [missed] = _captures(diagnose(agent, project=project))
    assert not missed.ok and "npm_missing_script" in missed.detail and not missed.fatal
    assert "payload holds push or python or node:" in missed.detail
    # Edited into something this StateWise does not write: read as letting no rule through.
    hook["command"] = hook["command"].replace("*) printf '{}\\n' ;;", "*) true ;;")
    path.write_text(json.dumps(data))
    [missed] = _captures(diagnose(agent, project=project))
    assert "a shell filter StateWise did not write" in missed.detail and "python_version_printed" in missed.detail


def test_a_post_tool_filter_missing_for_a_rule_is_reported_with_the_fix(project):
    install_hooks("claude-code", project=project)
    path = settings_path("claude-code", project=project)
    data = json.loads(path.read_text())
    data["hooks"]["PostToolUse"] = [g for g in data["hooks"]["PostToolUse"] if g["hooks"][0]["if"] != "Bash(*npm*)"]
    path.write_text(json.dumps(data))
    checks = diagnose("claude-code", project=project)
    [missed] = [c for c in _captures(checks) if not c.ok]
    assert "PostToolUse" in missed.detail and "npm_missing_script" in missed.detail and not missed.fatal
    assert "statewise install claude-code" in missed.fix and _failed(checks) == set()
    # An unconditional hook next to the filtered ones covers every rule.
    unconditional = {k: v for k, v in data["hooks"]["PostToolUse"][0]["hooks"][0].items() if k != "if"}
    data["hooks"]["PostToolUse"].append({"matcher": "Bash", "hooks": [unconditional]})
    path.write_text(json.dumps(data))
    assert all(c.ok for c in _captures(diagnose("claude-code", project=project)))


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_contract_chosen_after_install_with_a_new_rule_is_reported_until_reinstalled(agent, project, tmp_path):
    # Claude Code's post-tool hooks are filtered by `if` rules, Codex's and Gemini CLI's by the
    # shell pre-filter in their command: doctor reads both.
    install_hooks(agent, project=project)
    contract = tmp_path / "team.yaml"
    # The built-in contract with one more observation rule.
    contract.write_text(
        "name: team\nversion: 1\nextends: coding\n"
        "observations:\n  - name: cargo_version_printed\n    description: Cargo printed its version.\n"
        "    command: '^cargo\\s+--version$'\n    output: '^cargo (?P<value>\\d+\\.\\d+\\.\\d+)'\n"
        "    key: runtime.node_version\n")
    (project / ".statewise").mkdir(exist_ok=True)
    (project / ".statewise" / "config.toml").write_text(f'contract = "{contract}"\n')
    missed = [c for c in _captures(diagnose(agent, project=project)) if not c.ok]
    assert len(missed) == len(AGENTS[agent].post_events) and all("cargo_version_printed" in c.detail for c in missed)
    assert all(f"statewise install {agent}" in c.fix and not c.fatal for c in missed)
    install_hooks(agent, project=project)
    assert [c.ok for c in _captures(diagnose(agent, project=project))] == [True] * len(AGENTS[agent].post_events)


def test_a_runtime_directory_others_can_enter_is_reported_with_the_fix(project, tmp_path, monkeypatch):
    # A speed matter, not a safety one: the hook then checks each guarded call itself.
    install_hooks("claude-code", project=project)
    shared = tmp_path / "shared-runtime"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("STATEWISE_RUNTIME_DIR", str(shared))
    [worker] = [c for c in diagnose("claude-code", project=project) if c.name == "warm worker"]
    assert not worker.ok and not worker.fatal and str(shared) in worker.fix
    shared.chmod(0o700)
    [worker] = [c for c in diagnose("claude-code", project=project) if c.name == "warm worker"]
    assert worker.ok and "none running" in worker.detail
    monkeypatch.setenv("STATEWISE_NO_WARM", "1")
    [worker] = [c for c in diagnose("claude-code", project=project) if c.name == "warm worker"]
    assert worker.ok and "turned off" in worker.detail


def test_a_running_worker_is_reported_with_the_code_it_serves(project, tmp_path, monkeypatch):
    import re
    import signal
    import subprocess
    import sys
    import time

    from statewise.integrations import warm

    install_hooks("claude-code", project=project)
    # Short, as the default folder is: a Unix socket's path holds at most 107 bytes, and pytest's
    # numbered temporary folders grow with every run on a machine (pytest-106/test_a_running_...).
    runtime = Path(tempfile.mkdtemp(prefix="sw-doc-")) / "runtime"
    monkeypatch.setenv("STATEWISE_RUNTIME_DIR", str(runtime))
    # A worker of the code on disk, and one of another version (as after an upgrade), each a real
    # process listening in the runtime folder.
    workers = [subprocess.Popen([sys.executable, "-c", f"from statewise.integrations.warm import serve; "
                                 f"serve({str(runtime)!r}, {stamp!r})"], start_new_session=True)
               for stamp in (warm.code_stamp(), "0" * 32)]
    try:
        deadline = time.monotonic() + 60
        while len(warm.running_workers(str(runtime))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        [worker] = [c for c in diagnose("claude-code", project=project) if c.name == "warm worker"]
        assert worker.ok and "2 running" in worker.detail, worker
        # (doctor's own trial of the hook may be one of the calls of the worker for this code)
        assert re.search(rf"pid {workers[0].pid} \(\d calls, this code\)", worker.detail), worker.detail
        assert f"pid {workers[1].pid} (0 calls, other code: it exits within a minute)" in worker.detail
    finally:
        for process in workers:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        shutil.rmtree(runtime.parent, ignore_errors=True)
