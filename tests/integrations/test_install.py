"""statewise install / uninstall: idempotent, never touching other hooks, and failing closed in the
client: the wrapper it writes is run for real through /bin/sh with crashing, hanging and missing
programs behind it."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.errors import InputError
from statewise.integrations.hook_files import required_literals
from statewise.integrations.install import (
    AGENTS,
    install_hooks,
    post_filter_command,
    post_filter_literals,
    post_filter_parts,
    post_tool_literals,
    render_wrapper,
    rule_literal,
    settings_path,
    uninstall_hooks,
    wrapper_path,
)
from tests.integrations.installed import client_env

THEIRS = {"type": "command", "command": "prettier --write", "timeout": 5}
#: The built-in contract's observation rules hold these literals (git push, python, node, npm).
BUILTIN_FILTERS = ["Bash(*push*)", "Bash(*python*)", "Bash(*node*)", "Bash(*npm*)"]
BUILTIN_LITERALS = ("push", "python", "node", "npm")


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_install_is_idempotent_and_keeps_other_hooks(agent, tmp_path):
    spec = AGENTS[agent]
    path = settings_path(agent, project=tmp_path)
    path.parent.mkdir(parents=True)
    existing = {"model": "keep-me", "hooks": {spec.pre_event: [{"matcher": "Bash", "hooks": [THEIRS]}],
                                              "Stop": [{"hooks": [THEIRS]}]}}
    path.write_text(json.dumps(existing))

    written, changed = install_hooks(agent, project=tmp_path)
    assert written == path and changed
    once = json.loads(path.read_text())
    assert once["model"] == "keep-me" and once["hooks"]["Stop"][0] == {"hooks": [THEIRS]}  # theirs kept, first
    pre = once["hooks"][spec.pre_event]
    assert pre[0] == {"matcher": "Bash", "hooks": [THEIRS]}
    wrapper = wrapper_path(project=tmp_path)
    # The project's settings (the file a team commits) hold portable commands only.
    assert str(tmp_path) not in path.read_text()
    assert pre[1]["hooks"][0]["command"].startswith(spec.locate("pre") + f'"$d/.statewise/bin/statewise-hook" {agent} pre || ')
    for event in spec.post_events:
        post = once["hooks"][event][0]["hooks"][0]["command"]
        if agent == "claude-code":  # filtered by `if` rules (below), the command is the plain call
            assert post == spec.command(None, "post")
        else:  # a shell pre-filter on the payload, around the same call
            assert post == spec.locate("post") + post_filter_command(spec.invocation(None, "post"), BUILTIN_LITERALS)
    assert once["hooks"]["SessionStart"][0]["hooks"][0]["command"] == spec.command(None, "session")
    assert once["hooks"][spec.prompt_event][0]["hooks"][0]["command"] == spec.command(None, "prompt")
    assert once["hooks"][spec.stop_event][-1]["hooks"][0]["command"] == spec.command(None, "stop")
    assert os.access(wrapper, os.X_OK)

    assert install_hooks(agent, project=tmp_path) == (path, False)
    assert json.loads(path.read_text()) == once

    removed_path, removed = uninstall_hooks(agent, project=tmp_path)
    per_event = len(BUILTIN_FILTERS) if agent == "claude-code" else 1  # one post-tool hook per `if` filter
    assert removed == 4 + len(spec.post_events) * per_event  # pre, session, prompt, stop and the post hooks
    assert json.loads(path.read_text()) == existing
    assert not wrapper.exists()
    assert uninstall_hooks(agent, project=tmp_path)[1] == 0


def test_install_creates_a_missing_settings_file_and_uninstall_leaves_no_empty_shells(tmp_path):
    path, changed = install_hooks("claude-code", project=tmp_path)
    assert changed and path == tmp_path / ".claude" / "settings.json"
    assert set(json.loads(path.read_text())["hooks"]) == {"PreToolUse", "PostToolUse", "PostToolUseFailure",
                                                          "SessionStart", "UserPromptSubmit", "Stop"}
    assert uninstall_hooks("claude-code", project=tmp_path)[1] == 4 + 2 * len(BUILTIN_FILTERS)
    assert not path.exists() and not path.parent.exists()  # no {"hooks": {}} left behind


@pytest.mark.parametrize(("agent", "expected"), [("claude-code", 45), ("codex", 45), ("gemini", 45000)])
def test_timeouts_are_written_in_each_clients_unit(agent, expected, tmp_path):
    path, _ = install_hooks(agent, project=tmp_path, timeout=45)
    hooks = json.loads(path.read_text())["hooks"]
    assert {group["hooks"][0]["timeout"] for groups in hooks.values() for group in groups} == {expected}
    script = wrapper_path(project=tmp_path).read_text()
    assert "\nalarm(41)\n" in script and '"--deadline", "38"' in script  # the wrapper's and the hook's deadlines
    assert "\n    sleep 41 &\n" in script  # the shell half's watchdog, from before Python starts
    install_hooks(agent, project=tmp_path, timeout=45, executable="/bin/true")
    script = wrapper_path(project=tmp_path).read_text()
    assert "sleep 41 &" in script and "--deadline 38" in script  # the same in the shell wrapper


def test_a_timeout_too_short_for_a_check_is_refused(tmp_path):
    with pytest.raises(InputError, match="--timeout"):
        install_hooks("gemini", project=tmp_path, timeout=5)
    assert not (tmp_path / ".gemini").exists() and not wrapper_path(project=tmp_path).exists()


def test_install_from_a_subdirectory_writes_at_the_git_root_and_keeps_the_files_mode(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(0o644)
    written, _ = install_hooks("claude-code", project=tmp_path / "src")
    assert written == path and not (tmp_path / "src" / ".claude").exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_changed_store_replaces_the_old_entry_instead_of_stacking(tmp_path):
    install_hooks("gemini", project=tmp_path)
    install_hooks("gemini", project=tmp_path, store="/tmp/s.db")
    before = json.loads(settings_path("gemini", project=tmp_path).read_text())["hooks"]["BeforeTool"]
    assert len(before) == 1
    assert '"--store", \'/tmp/s.db\'' in wrapper_path(project=tmp_path).read_text()


def test_uninstall_removes_legacy_bare_commands(tmp_path):
    path = settings_path("claude-code", project=tmp_path)
    path.parent.mkdir(parents=True)
    legacy = {"type": "command", "command": "statewise hook claude-code", "timeout": 60}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [legacy, THEIRS]}]}}))
    assert uninstall_hooks("claude-code", project=tmp_path)[1] == 1
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}]}}


# --- the wrapper fails closed, run for real through /bin/sh ---------------------------------

PRE_CALL = json.dumps({"cwd": "/", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "git status"}})
#: A finished call an observation rule of the built-in contract can match (it holds "python").
POST_CALL = json.dumps({"cwd": "/", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "python3 --version"}, "tool_response": "Python 3.12.1"})


def _run_installed(agent, tmp_path, payload=PRE_CALL, event="pre", *, project=None):
    """Run the settings command exactly as the client does: through a shell, in the project's
    folder with the client's project variable, JSON on stdin."""
    hooks = json.loads(settings_path(agent, project=tmp_path).read_text())["hooks"]
    name = AGENTS[agent].pre_event if event == "pre" else AGENTS[agent].post_events[0]
    command = hooks[name][-1]["hooks"][0]["command"]
    where = project or tmp_path
    return subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True, timeout=60,
                          cwd=where, env=client_env(agent, where))


def _fake(tmp_path, body):
    program = tmp_path / "fake-hook"
    program.write_text("#!/bin/sh\n" + body + "\n")
    program.chmod(0o755)
    return program


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_real_hook_answers_through_the_wrapper(agent, tmp_path):
    install_hooks(agent, project=tmp_path)
    done = _run_installed(agent, tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout) == {}


@pytest.mark.parametrize(("body", "why"), [
    ("exit 1", "failed (exit 1)"),
    ("kill -9 $$", "failed (exit 137)"),
    ("echo 'Traceback (most recent call last)'", "printed no decision"),
    ("printf '{\"decision\": '", "printed no decision"),
])
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_crash_a_signal_or_garbage_is_a_block(agent, body, why, tmp_path):
    install_hooks(agent, project=tmp_path, executable=_fake(tmp_path, body))
    done = _run_installed(agent, tmp_path)
    assert done.returncode == 2 and why in done.stderr and "StateWise blocked this call" in done.stderr
    assert done.stderr.count("\n") == 1  # one line: Codex shows it to the model as the reason


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_missing_program_or_wrapper_is_a_block(agent, tmp_path):
    install_hooks(agent, project=tmp_path, executable=tmp_path / "gone")
    done = _run_installed(agent, tmp_path)
    assert done.returncode == 2 and "missing or not executable" in done.stderr
    wrapper_path(project=tmp_path).unlink()
    done = _run_installed(agent, tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"StateWise is not set up on this machine for this project (no .statewise/bin/statewise-hook in {tmp_path} " \
           f"or above); install StateWise (pip install statewise) and run: statewise install {agent}" in done.stderr


def test_a_hook_past_the_wrappers_deadline_is_killed_and_blocked(tmp_path):
    install_hooks("claude-code", project=tmp_path, executable=_fake(tmp_path, "sleep 300"), timeout=10)
    started = time.monotonic()
    done = _run_installed("claude-code", tmp_path)
    elapsed = time.monotonic() - started
    assert done.returncode == 2 and "did not finish within 6 s" in done.stderr
    assert elapsed < 10  # below the client's timeout, after which the client would run the tool


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_after_a_tool_ran_a_failing_hook_blocks_nothing(agent, tmp_path):
    install_hooks(agent, project=tmp_path, executable=_fake(tmp_path, "exit 1"))
    done = _run_installed(agent, tmp_path, POST_CALL, event="post")
    assert done.returncode == 0 and json.loads(done.stdout) == {}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}'])
def test_malformed_settings_are_reported_and_left_untouched(tmp_path, content):
    path = settings_path("claude-code", project=tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(InputError) as info:
        install_hooks("claude-code", project=tmp_path)
    assert str(path) in str(info.value)
    assert path.read_text() == content


def test_unknown_agent_is_an_input_error(tmp_path):
    with pytest.raises(InputError):
        install_hooks("cursor", project=tmp_path)


# --- StateWise's own wrapper: one Python process, failing closed without a watchdog process ---


def test_the_wrapper_starts_the_interpreter_isolated_with_the_package_added(tmp_path):
    install_hooks("claude-code", project=tmp_path)
    script = wrapper_path(project=tmp_path).read_text()
    assert script.startswith("#!/bin/sh\n")
    assert f"\npython={shlex.quote(str(Path(sys.executable).absolute()))}\n" in script
    assert '"$python" -IS "$0" "$@" <&3 3<&- &' in script
    import statewise

    assert f"sys.path.append({str(Path(statewise.__file__).resolve().parent.parent)!r})" in script


def test_a_long_interpreter_path_with_a_blank_starts(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60) / "python with a blank"
    deep.parent.mkdir(parents=True)
    deep.symlink_to(sys.executable)
    install_hooks("claude-code", project=tmp_path)
    wrapper = wrapper_path(project=tmp_path)
    wrapper.write_text(render_wrapper(timeout=30, interpreter=deep))
    done = _run_installed("claude-code", tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    deep.unlink()
    done = _run_installed("claude-code", tmp_path)
    assert done.returncode == 2 and f"the Python that installed StateWise here ({deep}) is gone" in done.stderr


def test_a_missing_interpreter_is_a_block(tmp_path):
    interpreter = tmp_path / "python"
    interpreter.symlink_to(sys.executable)
    install_hooks("codex", project=tmp_path)
    wrapper_path(project=tmp_path).write_text(render_wrapper(timeout=30, interpreter=interpreter))
    assert _run_installed("codex", tmp_path).returncode == 0
    interpreter.unlink()  # e.g. the virtual environment StateWise was installed from was deleted
    done = _run_installed("codex", tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr == (f"StateWise blocked this call: the Python that installed StateWise here ({interpreter}) "
                           "is gone; install StateWise on this machine and run: statewise install codex\n")
    after = _run_installed("codex", tmp_path, POST_CALL, event="post")
    assert after.returncode == 0 and json.loads(after.stdout) == {}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_statewise_gone_from_the_package_directory_is_a_one_line_block(agent, tmp_path):
    install_hooks(agent, project=tmp_path)
    (tmp_path / "empty").mkdir()
    wrapper_path(project=tmp_path).write_text(render_wrapper(timeout=30, package_dir=tmp_path / "empty"))
    done = _run_installed(agent, tmp_path)
    assert done.returncode == 2 and "StateWise blocked this call: StateWise cannot be loaded" in done.stderr
    assert "ModuleNotFoundError" in done.stderr and done.stderr.count("\n") == 1
    after = _run_installed(agent, tmp_path, POST_CALL, event="post")
    assert after.returncode == 0 and json.loads(after.stdout) == {}


def _stand_in_package(tmp_path, body):
    """A package directory whose hook_entry.main is ``body``: the wrapper's own guards, without StateWise's."""
    package = tmp_path / "stand-in" / "statewise" / "integrations"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "hook_entry.py").write_text(f"def main(argv):\n    {body}\n")
    return tmp_path / "stand-in"


@pytest.mark.parametrize("body", [
    "import time; time.sleep(300)",
    # Catastrophic backtracking: C code that holds the GIL, so no thread could answer in time.
    "import re; re.match(r'(a+)+$', 'a' * 64 + 'b')",
])
def test_a_hook_past_the_wrappers_deadline_is_ended_by_the_kernel_and_blocked(body, tmp_path):
    install_hooks("claude-code", project=tmp_path, timeout=10)
    wrapper_path(project=tmp_path).write_text(render_wrapper(timeout=10, package_dir=_stand_in_package(tmp_path, body)))
    started = time.monotonic()
    done = _run_installed("claude-code", tmp_path)
    elapsed = time.monotonic() - started
    assert done.returncode == 2 and "the hook did not answer within 6 s" in done.stderr
    assert 5.5 < elapsed < 10  # at the wrapper's deadline (6 s), below the client's timeout


@pytest.mark.parametrize(("answer", "why"), [
    ("'sure, go ahead', '', 0", "printed no decision"),
    ("'{\"decision\": ', '', 0", "printed no decision"),
    ("'', '', 0", "printed no decision"),
    ("'{}', 'Traceback', 1", "failed (exit 1) Traceback"),
])
def test_an_answer_that_is_not_a_decision_is_a_block_before_the_tool_and_nothing_after(answer, why):
    def emit(event):
        code = f"from statewise.integrations.hook_entry import _emit; _emit({answer}, {event!r})"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)

    before = emit("pre")
    assert before.returncode == 2 and before.stdout == ""
    assert before.stderr == f"StateWise blocked this call: the hook {why}\n"
    after = emit("post")
    assert after.returncode == 0 and after.stdout == "{}\n" and after.stderr == ""


def test_what_a_library_prints_on_the_slow_path_never_reaches_the_client():
    code = ("import sys; from statewise.integrations.hook_entry import _emit, _quiet; _quiet(); print('noise'); "
            "sys.stdout.flush(); sys.stderr.write('a log line\\n'); sys.stderr.flush(); "
            "_emit('', 'the reason', 2, 'pre')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "the reason\n")


def test_the_projects_own_files_cannot_shadow_the_hooks_modules(tmp_path):
    # The wrapper's interpreter runs with -I: the working directory is not on sys.path, so a
    # project's statewise/ or json.py is never imported in place of the real ones.
    install_hooks("claude-code", project=tmp_path)
    (tmp_path / "statewise").mkdir()
    (tmp_path / "statewise" / "__init__.py").write_text("print('{}'); raise SystemExit(0)\n")
    (tmp_path / "json.py").write_text("print('{}'); raise SystemExit(0)\n")
    hooks = json.loads(settings_path("claude-code", project=tmp_path).read_text())["hooks"]
    push = json.dumps({"cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "git push --force origin main"}})
    done = subprocess.run(["/bin/sh", "-c", hooks["PreToolUse"][-1]["hooks"][0]["command"]], input=push,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0 and "deny" in json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"]


def test_a_failure_inside_the_hook_is_a_one_line_block(tmp_path):
    install_hooks("codex", project=tmp_path)
    raising = _stand_in_package(tmp_path, "raise RuntimeError('boom\\nsecond line')")
    wrapper_path(project=tmp_path).write_text(render_wrapper(timeout=30, package_dir=raising))
    done = _run_installed("codex", tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("StateWise blocked this call: the hook failed (RuntimeError: boom second line)")
    wrapper = wrapper_path(project=tmp_path)
    for arguments, code in ((["codex"], 2), ([], 2), (["codex", "post"], 0), (["codex", "session"], 0)):
        done = subprocess.run([str(wrapper), *arguments], input="{}", capture_output=True, text=True, timeout=60)
        assert done.returncode == code, arguments


def test_a_package_directory_with_quotes_and_blanks_is_written_safely(tmp_path):
    odd = tmp_path / "it's \"odd\" \\ here"
    odd.mkdir()
    install_hooks("claude-code", project=tmp_path)
    wrapper_path(project=tmp_path).write_text(render_wrapper(timeout=30, package_dir=odd))
    done = _run_installed("claude-code", tmp_path)
    assert done.returncode == 2 and f"StateWise cannot be loaded from {odd}" in done.stderr


def test_claude_code_waits_for_every_hook_statewise_installs(tmp_path):
    # Measured in Claude Code 2.1.197 (docs/performance-hook.md): `async: true` on the post-tool hooks
    # saves no measurable time, and `claude -p` kills a background hook when the session ends,
    # so the capture of the last command was lost; the pre-tool guard must never be async.
    path, _ = install_hooks("claude-code", project=tmp_path)
    hooks = json.loads(path.read_text())["hooks"]
    for event in ("PreToolUse", "SessionStart"):
        [group] = hooks[event]
        [hook] = group["hooks"]
        assert set(hook) == {"type", "command", "timeout"}, (event, hook)
        assert hook["type"] == "command"
    for event in ("PostToolUse", "PostToolUseFailure"):
        # `if` decides whether a hook is spawned at all; the client still waits for each one.
        hooks_of = [hook for group in hooks[event] for hook in group["hooks"]]
        assert all(set(hook) == {"type", "command", "timeout", "if"} for hook in hooks_of), hooks_of


def _contract_with(tmp_path, rule: str) -> Path:
    """The built-in contract with one more observation rule, after its own (YAML text, indented as a
    list item)."""
    path = tmp_path / "team.yaml"
    path.write_text("name: team\nversion: 1\nextends: coding\nobservations:\n" + rule, encoding="utf-8")
    return path


CARGO_RULE = """  - name: cargo_version_printed
    description: Cargo printed its version.
    command: '^cargo\\s+-V$'
    output: '^cargo (?P<value>\\d+\\.\\d+\\.\\d+)'
    key: runtime.node_version
"""
#: A rule no literal is common to: only an unconditional hook sees all its commands.
ANY_VCS_RULE = CARGO_RULE.replace("cargo_version_printed", "vcs_version_printed").replace(
    "'^cargo\\s+-V$'", "'^(?:git|hg)\\s'")


def _post_filters(path):
    hooks = json.loads(path.read_text())["hooks"]
    found = {event: [hook.get("if") for group in hooks[event] for hook in group["hooks"]]
             for event in ("PostToolUse", "PostToolUseFailure")}
    assert found["PostToolUse"] == found["PostToolUseFailure"]
    return found["PostToolUse"]


def test_claude_codes_post_tool_hooks_run_only_for_commands_holding_an_observation_literal(tmp_path):
    path, _ = install_hooks("claude-code", project=tmp_path)
    assert _post_filters(path) == BUILTIN_FILTERS
    # Every command a rule matches holds its literal: the hook is spawned for each of them.
    for rule in builtin_contract().observations:
        literal = rule_literal(rule.command)
        assert literal and f"Bash(*{literal}*)" in BUILTIN_FILTERS
        assert any(literal in found for found in required_literals(rule.command))


def test_a_rule_without_a_literal_keeps_one_unconditional_post_tool_hook(tmp_path):
    contract = _contract_with(tmp_path, ANY_VCS_RULE)
    path, _ = install_hooks("claude-code", project=tmp_path / "p", contract=str(contract))
    assert _post_filters(path) == [None]
    # Installing again with a contract whose rules all have literals replaces it, no stacking.
    path, changed = install_hooks("claude-code", project=tmp_path / "p", contract=str(_contract_with(
        tmp_path, CARGO_RULE)))
    assert changed and _post_filters(path) == [*BUILTIN_FILTERS, "Bash(*cargo*)"]


def test_the_projects_config_toml_contract_decides_the_filters(tmp_path):
    project = tmp_path / "p"
    (project / ".statewise").mkdir(parents=True)
    contract = _contract_with(tmp_path, CARGO_RULE)
    (project / ".statewise" / "config.toml").write_text(f'contract = "{contract}"\n', encoding="utf-8")
    path, _ = install_hooks("claude-code", project=project)
    assert _post_filters(path) == [*BUILTIN_FILTERS, "Bash(*cargo*)"]
    (project / ".statewise" / "config.toml").write_text("contract = [oops\n", encoding="utf-8")
    assert _post_filters(install_hooks("claude-code", project=project)[0]) == [None]  # unknown: no filter


def test_a_user_wide_install_filters_nothing(tmp_path, monkeypatch):
    # Every project may name its own contract in its config.toml: no filter is safe for all.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path, _ = install_hooks("claude-code", user=True)
    assert path == tmp_path / "home" / ".claude" / "settings.json" and _post_filters(path) == [None]


@pytest.mark.parametrize(("pattern", "literal"), [
    (r"\bgit\b.*\bpush\b", "push"),
    (r"^(?:\S*/)?python(?:3(?:\.\d+)?)?\s+(?:-V|--version)\s*$", "python"),
    (r"deploy:prod\*now", "deploy"),  # ':' and '*' are rule syntax in Claude Code: split there
    (r"make (?:build|test)", "make"),  # a literal with a blank: words are joined by one blank only
    (r"(?:git|hg) push", "push"),
    (r"(?:git|hg)", None),
    (r"(?i)push", None),  # case-insensitive: nothing is proven
])
def test_rule_literal_is_a_plain_part_every_match_holds(pattern, literal):
    assert rule_literal(pattern) == literal


# --- Codex and Gemini CLI: the post-tool call filtered in the shell -----------------------------

def _post_command(agent, path):
    [event] = AGENTS[agent].post_events
    [group] = json.loads(path.read_text())["hooks"][event]
    [hook] = group["hooks"]
    assert set(hook) == {"type", "command", "timeout"}, hook  # no `if`: these clients have none
    return hook["command"]


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_codex_and_gemini_filter_the_post_tool_call_on_the_same_literals_as_claude_code(agent, tmp_path):
    path, _ = install_hooks(agent, project=tmp_path / "p")
    spec = AGENTS[agent]
    invocation = spec.invocation(None, "post")  # the portable call, after the loop that finds the wrapper
    assert post_tool_literals(None) == BUILTIN_LITERALS
    assert post_filter_literals(_post_command(agent, path)) == BUILTIN_LITERALS
    assert _post_command(agent, path) == spec.locate("post") + post_filter_command(invocation, BUILTIN_LITERALS)
    # A contract with a new rule: installing again rewrites the filter, no stacking.
    install_hooks(agent, project=tmp_path / "p", contract=str(_contract_with(tmp_path, CARGO_RULE)))
    assert post_filter_literals(_post_command(agent, path)) == (*BUILTIN_LITERALS, "cargo")
    # A rule without a literal: the plain, unconditional call.
    install_hooks(agent, project=tmp_path / "p", contract=str(_contract_with(tmp_path, ANY_VCS_RULE)))
    assert _post_command(agent, path) == spec.command(None, "post")
    assert post_filter_literals(spec.command(None, "post")) is None


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_user_wide_codex_or_gemini_install_filters_nothing(agent, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path, _ = install_hooks(agent, user=True)
    assert _post_command(agent, path) == f"{wrapper_path(user=True)} {agent} post"


def test_a_shell_filter_edited_by_hand_proves_nothing():
    command = post_filter_command("'/x/statewise-hook' codex post", ("push", "npm"))
    assert post_filter_literals(command) == ("push", "npm")
    assert post_filter_parts(command) == ("'/x/statewise-hook' codex post", ("push", "npm"))
    assert post_filter_literals(command.replace("*'npm'*", "*'np m'*")) == ()
    assert post_filter_literals(command.replace(" ;; *)", "|*) ;; *)")) == ()
    assert post_filter_literals(command.replace("| '/x/", "| /bin/true # '/x/")) == ()
    assert post_filter_literals("'/x/statewise-hook' codex post") is None
    with pytest.raises(ValueError):
        post_filter_command("'/x/statewise-hook' codex post", ("a*b",))


#: A stand-in wrapper: it keeps the bytes it got on stdin and its arguments, and answers (shell
#: built-ins and the interpreter by absolute path only: one test runs it with no PATH).
RECORDING_WRAPPER = """#!/bin/sh
{python} -c 'import sys; open(sys.argv[1], "wb").write(sys.stdin.buffer.read())' "${{0%/*}}/stdin"
printf '%s\\n' "$*" >"${{0%/*}}/arguments"
printf '{{"recorded": true}}\\n'
exit {status}
"""


def _recording_wrapper(folder: Path, status: int = 0) -> Path:
    folder.mkdir(parents=True)
    wrapper = folder / "statewise-hook"
    wrapper.write_text(RECORDING_WRAPPER.format(python=sys.executable, status=status))
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.parametrize("shell", ["/bin/sh", "bash"])  # Codex runs hooks through a shell; Gemini CLI `bash -c`
def test_the_shell_filter_hands_the_exact_payload_to_the_wrapper_or_answers_for_it(shell, tmp_path):
    wrapper = _recording_wrapper(tmp_path / "it's here")  # a quote and a blank in the path
    command = post_filter_command(f"{shlex.quote(str(wrapper))} codex post", BUILTIN_LITERALS)
    capturing = (json.dumps({"tool_name": "Bash", "tool_input": {"command": "npm run check"},
                             "tool_response": "caf\u00e9 \\ \"$HOME\" `x` *"}, ensure_ascii=False) + "\n\n").encode()

    done = subprocess.run([shell, "-c", command], input=capturing, capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b'{"recorded": true}\n', b"")
    assert (wrapper.parent / "stdin").read_bytes() == capturing  # the very bytes, trailing newlines too
    assert (wrapper.parent / "arguments").read_text() == "codex post\n"

    (wrapper.parent / "stdin").unlink()
    harmless = json.dumps({"tool_name": "Bash", "tool_input": {"command": "git status"},
                           "tool_response": "On branch main"}).encode()
    done = subprocess.run([shell, "-c", command], input=harmless, capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}\n", b"")
    assert not (wrapper.parent / "stdin").exists()  # the wrapper never ran

    # A literal only in the tool's output still runs the hook: the filter may only widen.
    in_output = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "node_modules"})
    done = subprocess.run([shell, "-c", command], input=in_output.encode(), capture_output=True, timeout=30)
    assert done.stdout == b'{"recorded": true}\n' and (wrapper.parent / "stdin").read_bytes() == in_output.encode()


def test_the_shell_filter_keeps_the_wrappers_exit_status_and_runs_it_when_cat_cannot(tmp_path):
    wrapper = _recording_wrapper(tmp_path / "w", status=3)
    command = post_filter_command(f"{shlex.quote(str(wrapper))} gemini post", BUILTIN_LITERALS)
    payload = b'{"tool_input": {"command": "python3 --version"}}'
    done = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, timeout=30)
    assert done.returncode == 3 and done.stdout == b'{"recorded": true}\n'
    # No `cat` on PATH: the wrapper (named by absolute path) reads the payload itself, whatever it holds.
    (wrapper.parent / "stdin").unlink()
    harmless = b'{"tool_input": {"command": "git status"}}'
    done = subprocess.run(["/bin/sh", "-c", command], input=harmless, capture_output=True, timeout=30,
                          env={"PATH": str(tmp_path / "nothing")})
    assert done.returncode == 3 and (wrapper.parent / "stdin").read_bytes() == harmless
