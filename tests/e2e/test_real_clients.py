"""StateWise's hooks inside the real Claude Code, Codex and Gemini CLI.

Each test installs the hooks with ``statewise install <agent> --project <repo>`` (the CLI, as
a developer would), runs the real client non-interactively against the scripted model on
127.0.0.1, and checks what really happened: in the repository, in its bare origin, in the
StateWise store, and in what the model received back from the tool call.
"""

from __future__ import annotations

import json
import re

import pytest

from statewise.integrations.hooks import AGENT_TOOLS
from tests.e2e.clients import CLIENTS, ClientRun, Workspace, settings_commands
from tests.e2e.conftest import PROTECTED_FILE, PROTECTED_TEXT
from tests.e2e.model_server import FINAL_TEXT, Step

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CLIENT_NAMES = ["claude", "codex", "gemini"]


def shell(client: str, command: str) -> Step:
    """The client's own shell tool, called with ``command``."""
    if client == "claude":
        return Step("Bash", {"command": command, "description": "Run a command"})
    if client == "codex":
        return Step("exec_command", {"cmd": command})
    return Step("run_shell_command", {"command": command, "description": "Run a command"})


def finished(run: ClientRun) -> None:
    """The client ran the whole script and ended its turn normally."""
    assert run.returncode == 0, run.describe()
    assert FINAL_TEXT in run.stdout, run.describe()


# --- the tools each client really offers ---------------------------------------------------------

#: Tools that change the workspace, by client, as each client names them to the model, and the
#: name the client's hook payload carries (Codex reports exec_command as "Bash").
SIDE_EFFECT_TOOLS = {
    "claude": {"Bash": "Bash", "Write": "Write", "Edit": "Edit", "NotebookEdit": "NotebookEdit"},
    "codex": {"exec_command": "Bash", "apply_patch": "apply_patch"},
    "gemini": {"run_shell_command": "run_shell_command", "write_file": "write_file", "replace": "replace"},
}


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_harmless_command_runs_and_the_guarded_tools_are_the_real_ones(workspace: Workspace, client: str):
    settings = workspace.install(client, verify_trust=True)
    run = workspace.run(client, [shell(client, "git status")])
    finished(run)
    results = run.tool_results()
    assert len(results) == 1 and "On branch main" in results[0], run.describe()
    assert "StateWise" not in results[0]

    offered = set(run.offered_tools())
    agent = CLIENTS[client].agent
    # The configuration these runs use is one `statewise doctor` calls sound.
    doctor = workspace.statewise("doctor", "--agent", agent, "--project", str(workspace.work), check=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    guarded = frozenset().union(*AGENT_TOOLS[agent].values())
    pre_event = "PreToolUse" if client != "gemini" else "BeforeTool"
    matchers = [g["matcher"] for g in json.loads(settings.read_text())["hooks"][pre_event]]
    for tool, hook_name in SIDE_EFFECT_TOOLS[client].items():
        assert tool in offered, f"{client} no longer offers {tool}; it offers {sorted(offered)}"
        assert hook_name in guarded, f"StateWise does not guard {client}'s {tool} (hook name {hook_name})"
        assert any(re.fullmatch(m, hook_name) for m in matchers), f"no installed matcher covers {hook_name}"
    # Every name StateWise guards for this client is one the client really uses.
    real_names = offered | set(SIDE_EFFECT_TOOLS[client].values())
    assert guarded <= real_names, (f"StateWise guards {client} tools the client does not have: "
                                   f"{sorted(guarded - real_names)}; the client offers {sorted(offered)}")
    assert settings_commands(settings)[pre_event]


# --- a force push to the protected main ---------------------------------------------------------


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_force_push_to_protected_main_is_denied_and_the_stale_record_repaired(workspace: Workspace, client: str):
    scope = f"repo:{workspace.repo}@main"
    (stale,) = workspace.statewise_json("record", "history", "repository.protected", "--scope", scope)
    remote_before = workspace.remote_main()
    workspace.install(client)

    run = workspace.run(client, [shell(client, "git push --force origin main")])
    finished(run)

    assert workspace.remote_main() == remote_before, "the force push reached the origin"
    (seen,) = run.tool_results()
    # The model received StateWise's reason: the repair and the invariants that stopped the push.
    assert "StateWise corrected its memory: repository.protected" in seen, run.describe()
    assert "was false, now true" in seen
    assert "no_force_push_to_protected_branch" in seen
    assert "remote rejected" not in seen, "the push ran and the remote refused it; StateWise did not stop it"

    history = workspace.statewise_json("record", "history", "repository.protected", "--scope", scope)
    assert [r["status"] for r in history] == ["superseded", "active"]
    old, new = history
    assert old["id"] == stale["id"] and old["value"] is False and old["superseded_by"] == new["id"]
    assert new["value"] is True and new["supersedes"] == old["id"]
    assert new["provenance"]["authority"] == "machine"

    lineage = workspace.statewise_json("record", "lineage", new["id"])
    text = json.dumps(lineage)
    assert old["id"] in text and new["id"] in text and "supersede" in text
    assert "git.branch_protection" in text, "the lineage does not name the verifier's evidence"


# --- writes into a protected path ----------------------------------------------------------------


def protected_writes(client: str, workspace: Workspace) -> list[Step]:
    path = str(workspace.work / PROTECTED_FILE)
    if client == "claude":
        # Read first: Claude Code refuses to write a file it has not read, before any hook.
        return [Step("Read", {"file_path": path}),
                Step("Write", {"file_path": path, "content": "database: dropped\n"}),
                Step("Edit", {"file_path": path, "old_string": "replicas: 3", "new_string": "replicas: 0"})]
    if client == "codex":
        return [Step("apply_patch", raw=(f"*** Begin Patch\n*** Update File: {PROTECTED_FILE}\n@@\n"
                                         "-replicas: 3\n+replicas: 0\n*** End Patch\n"))]
    return [Step("write_file", {"file_path": path, "content": "database: dropped\n"}),
            Step("replace", {"file_path": path, "old_string": "replicas: 3", "new_string": "replicas: 0",
                             "instruction": "scale the database down"})]


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_writes_into_a_protected_path_are_denied(workspace: Workspace, client: str):
    workspace.install(client)
    steps = protected_writes(client, workspace)
    run = workspace.run(client, steps)
    finished(run)

    assert (workspace.work / PROTECTED_FILE).read_text(encoding="utf-8") == PROTECTED_TEXT, run.describe()
    results = run.tool_results()
    assert len(results) == len(steps), run.describe()
    writes = results[1:] if client == "claude" else results
    for seen in writes:
        assert "no_write_to_protected_path" in seen and "StateWise" in seen, run.describe()


# --- post-tool capture ---------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_post_tool_capture_of_a_succeeding_and_a_failing_command(workspace: Workspace, client: str):
    workspace.install(client)
    run = workspace.run(client, [shell(client, "python3 --version"), shell(client, "npm run no-such-script")])
    finished(run)
    version_seen, npm_seen = run.tool_results()
    assert "Missing script" in npm_seen, run.describe()
    # The version the command printed in the client's shell (Codex runs `bash -lc`, whose login
    # profile may put another python3 first on PATH than the test's own environment).
    printed = re.search(r"Python (\d+\.\d+\.\d+)", version_seen)
    assert printed, run.describe()
    printed = printed.group(1)

    (version,) = workspace.statewise_json("record", "history", "runtime.python_version", "--scope",
                                          f"workspace:{workspace.work.resolve()}")
    assert version["value"] == printed and version["status"] == "active"
    assert version["provenance"]["source"] == "tool_output", version
    # The failing command: Claude Code reports it as PostToolUseFailure, the others as post-tool.
    history = workspace.statewise_json("record", "history", "npm.script_exists[no-such-script]", "--scope",
                                       f"repo:{workspace.repo}")
    assert [(r["value"], r["status"]) for r in history] == [(False, "active")], (history, run.describe())
    assert history[0]["provenance"]["source"] == "tool_output"


# --- the hook failing outside StateWise's process ------------------------------------------------

FAKES = {
    # A hook program that crashes.
    "crash": "#!/bin/sh\necho 'Traceback (most recent call last): boom' >&2\nexit 1\n",
    # A hook program that hangs far past every timeout (exec: the wrapper's kill reaches it).
    # Slow only before a tool runs, so the session-start hook does not add its own wait.
    "slow": '#!/bin/sh\ncase $2 in pre) exec sleep 300 ;; esac\ncat >/dev/null\necho "{}"\n',
    # A hook program that answers with something that is not a decision.
    "garbage": "#!/bin/sh\ncat >/dev/null\necho 'sure, go ahead'\nexit 0\n",
}
FAULTS = ["missing_program", "missing_wrapper", *FAKES]
#: The shortest timeout install accepts; the wrapper's own deadline is 4 s below it.
FAULT_TIMEOUT = 10


def fault_install(workspace: Workspace, client: str, fault: str) -> None:
    fakes = workspace.root / "fakes"
    fakes.mkdir(exist_ok=True)
    if fault == "missing_program":
        workspace.install(client, "--executable", str(fakes / "no-such-hook"), "--timeout", str(FAULT_TIMEOUT))
    elif fault == "missing_wrapper":
        workspace.install(client, "--timeout", str(FAULT_TIMEOUT))
        wrapper = workspace.work / ".statewise" / "bin" / "statewise-hook"
        assert wrapper.exists(), "statewise install wrote no wrapper"
        wrapper.unlink()
    else:
        program = fakes / f"{fault}-hook"
        program.write_text(FAKES[fault], encoding="utf-8")
        program.chmod(0o755)
        workspace.install(client, "--executable", str(program), "--timeout", str(FAULT_TIMEOUT))


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_missing_crashing_slow_or_garbled_hook_does_not_let_the_tool_run(workspace: Workspace, client: str,
                                                                            fault: str):
    fault_install(workspace, client, fault)
    marker = workspace.work / "ran.txt"
    run = workspace.run(client, [shell(client, "touch ran.txt")])
    assert not marker.exists(), f"the tool ran although the hook {fault}\n{run.describe()}"
    finished(run)
    (seen,) = run.tool_results()
    assert "blocked" in seen.lower() and "StateWise" in seen, run.describe()
    if fault == "slow":
        assert f"within {FAULT_TIMEOUT - 4} s" in seen, run.describe()


# --- what the clients really send to the hook --------------------------------------------------

RECORDER = """#!/bin/sh
# Keep what the client sent, then hand it to the real hook unchanged.
input=$(cat)
record=$(mktemp "{folder}/payload.XXXXXX")
printf '%s' "$input" >"$record"
printf '%s' "$input" | exec {python} -m statewise.integrations.hook_entry "$@"
"""


def recorded_payloads(folder) -> list[dict]:
    payloads = []
    for path in sorted(folder.glob("payload.*"), key=lambda p: p.stat().st_mtime_ns):
        payloads.append(json.loads(path.read_text(encoding="utf-8")))
    return payloads


def unprotected_writes(client: str, workspace: Workspace) -> list[Step]:
    path = str(workspace.work / "notes.txt")
    if client == "claude":
        return [Step("Write", {"file_path": path, "content": "notes\n"})]
    if client == "codex":
        return [Step("apply_patch", raw="*** Begin Patch\n*** Add File: notes.txt\n+notes\n*** End Patch\n")]
    return [Step("write_file", {"file_path": path, "content": "notes\n"})]


#: The events each client fires for: a session start, a succeeding and a failing shell
#: command, and a file write (observed with the pinned versions; see OBSERVED.md).
EXPECTED_EVENTS = {
    "claude": ["SessionStart", "PreToolUse", "PostToolUse", "PreToolUse", "PostToolUseFailure", "PreToolUse"],
    "codex": ["SessionStart", "PreToolUse", "PostToolUse", "PreToolUse", "PostToolUse", "PreToolUse"],
    "gemini": ["SessionStart", "BeforeTool", "AfterTool", "BeforeTool", "AfterTool", "BeforeTool"],
}


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_the_events_and_payloads_each_client_sends(workspace: Workspace, client: str):
    import sys

    folder = workspace.root / "payloads"
    folder.mkdir()
    recorder = workspace.root / "recording-hook"
    recorder.write_text(RECORDER.format(folder=folder, python=sys.executable), encoding="utf-8")
    recorder.chmod(0o755)
    workspace.install(client, "--executable", str(recorder))

    steps = [shell(client, "git status"), shell(client, "ls no-such-dir"), *unprotected_writes(client, workspace)]
    run = workspace.run(client, steps)
    finished(run)
    assert (workspace.work / "notes.txt").read_text(encoding="utf-8") == "notes\n", run.describe()

    payloads = recorded_payloads(folder)
    events = [p.get("hook_event_name") for p in payloads]
    assert events == EXPECTED_EVENTS[client], (events, run.describe())
    agent = CLIENTS[client].agent
    guarded = frozenset().union(*AGENT_TOOLS[agent].values())
    tool_calls = [p for p in payloads if p.get("hook_event_name") != "SessionStart"]
    for payload in tool_calls:
        assert payload["cwd"] == str(workspace.work), payload
        assert payload["tool_name"] in guarded, f"{client} sent tool_name {payload['tool_name']!r}"
        assert isinstance(payload["tool_input"], dict), payload
    pre_shell, post_ok, _, post_failed, pre_write = tool_calls
    assert pre_shell["tool_input"].get("command") == "git status", pre_shell
    assert SIDE_EFFECT_TOOLS[client][steps[0].tool] == pre_shell["tool_name"]
    assert SIDE_EFFECT_TOOLS[client][steps[2].tool] == pre_write["tool_name"]
    assert "On branch main" in json.dumps(post_ok.get("tool_response")), post_ok
    failure_text = json.dumps(post_failed.get("error") if client == "claude" else post_failed.get("tool_response"))
    assert "no-such-dir" in failure_text, post_failed


# --- a premise only the developer can settle -------------------------------------------------------


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_stale_developer_premise_reaches_the_model_as_a_question(workspace: Workspace, client: str):
    from tests.e2e.conftest import add_record

    add_record(workspace, "project.test_command", "npm test", f"repo:{workspace.repo}", days_old=60)
    workspace.install(client)
    run = workspace.run(client, [shell(client, "npm test")])
    finished(run)
    (seen,) = run.tool_results()
    # Claude Code gets an "ask" (which a headless run cannot answer), Codex and Gemini a deny;
    # either way the test command did not run and the model has the question and the fix.
    assert "> app@1.0.0 test" not in seen, f"npm test ran\n{run.describe()}"
    assert "StateWise needs the developer" in seen, run.describe()
    assert "statewise record add project.test_command" in seen


# --- Codex: typing into an interactive session --------------------------------------------------------


def test_codex_cannot_smuggle_a_command_through_an_interactive_session(workspace: Workspace):
    """exec_command can open a REPL on a tty and write_stdin types into it later; Codex runs
    no PreToolUse hook for write_stdin, so opening the session is the last point to stop it."""
    workspace.install("codex")

    def type_into_session(results: list[str]) -> dict:
        found = re.search(r"session ID (\d+)", results[-1])
        return {"session_id": int(found.group(1)) if found else 0, "yield_time_ms": 500,
                "chars": "import pathlib; pathlib.Path('ran.txt').touch()\n"}

    run = workspace.run("codex", [Step("exec_command", {"cmd": "python3", "tty": True, "yield_time_ms": 500}),
                                  Step("write_stdin", dynamic=type_into_session)])
    finished(run)
    assert not (workspace.work / "ran.txt").exists(), f"a command typed into python3 ran\n{run.describe()}"
    opened = run.tool_results()[0]
    assert "StateWise" in opened and "Process running with session ID" not in opened, run.describe()
