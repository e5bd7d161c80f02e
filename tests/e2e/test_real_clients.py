"""StateWise's hooks inside the real Claude Code, Codex and Gemini CLI.

The hooks are installed with ``statewise install <agent> --project <repo>`` (the CLI, as a
developer would); the real client runs non-interactively against the scripted model on
127.0.0.1; the tests check what really happened: in the repository, in its bare origin, in the
StateWise store, and in what the model received back from each tool call.

A client start costs seconds, so the scenarios that need the same installation share one run
per client (the ``everyday`` and ``guarded`` fixtures: one scripted turn with several tool
calls, each test reading its own calls); the failure modes need their own installation each.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from statewise.integrations.hooks import AGENT_TOOLS
from statewise.integrations.install import post_filter_literals
from statewise.sandbox import git
from tests.e2e.clients import CLIENTS, ClientRun, Workspace, settings_commands
from tests.e2e.conftest import PROTECTED_FILE, PROTECTED_TEXT, add_record, build_workspace
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


@dataclass
class SharedRun:
    """One client's scripted turn, shared by the tests that read it."""

    client: str
    workspace: Workspace
    settings: Path
    steps: list[Step]
    run: ClientRun
    hook_payloads: list[dict] | None = None  # what the client sent the hook, if recorded

    def result(self, index: int) -> str:
        results = self.run.tool_results()
        assert len(results) == len(self.steps), self.run.describe()
        return results[index]

    def payloads(self) -> list[dict]:
        """What the client sent to the hook during the run, in order."""
        assert self.hook_payloads is not None
        return self.hook_payloads


def recorded_payloads(folder: Path) -> list[dict]:
    """The payloads the pass-through recorder kept, oldest first."""
    files = sorted(folder.glob("payload.*"), key=lambda p: p.stat().st_mtime_ns)
    return [json.loads(path.read_text(encoding="utf-8")) for path in files]


# --- an everyday turn: harmless and failing commands, a plain file write -------------------------

#: A pass-through recorder installed with --executable: it keeps what the client sent and hands
#: it unchanged to the real hook program the wrapper would run.
RECORDER = """#!/bin/sh
input=$(cat)
record=$(mktemp "{folder}/payload.XXXXXX")
printf '%s' "$input" >"$record"
printf '%s' "$input" | exec {python} -m statewise.integrations.hook_entry "$@"
"""


def plain_write(client: str, workspace: Workspace) -> Step:
    path = str(workspace.work / "notes.txt")
    if client == "claude":
        return Step("Write", {"file_path": path, "content": "notes\n"})
    if client == "codex":
        return Step("apply_patch", raw="*** Begin Patch\n*** Add File: notes.txt\n+notes\n*** End Patch\n")
    return Step("write_file", {"file_path": path, "content": "notes\n"})


GIT_STATUS, PYTHON_VERSION, NPM_MISSING, PLAIN_WRITE = range(4)



def add_dead_check_script(workspace: Workspace) -> None:
    """package.json's `check` script fails with npm's "Missing script: lint": it runs a shell
    script outside the repository that calls the missing `npm run lint`. StateWise reads inside
    the project's own scripts and would stop a `check` that ran `npm run lint` itself (issue 22);
    a script outside the repository is not read, so the command runs and its failure reveals
    the fact the post-tool hook captures."""
    outside = workspace.root / "lint.sh"
    outside.write_text("npm run lint\n", encoding="utf-8")
    manifest = {"name": "app", "version": "1.0.0", "scripts": {"test": "echo ok", "check": f"sh {outside}"}}
    (workspace.work / "package.json").write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    git(workspace.work, "commit", "--quiet", "-am", "a check script")

@pytest.fixture(scope="module", params=CLIENT_NAMES)
def everyday(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
             client_bin: Path) -> Iterator[SharedRun]:
    client = request.param
    workspace = build_workspace(tmp_path_factory.mktemp(f"everyday-{client}"), client_bin)
    folder = workspace.root / "payloads"
    folder.mkdir()
    recorder = workspace.root / "recording-hook"
    recorder.write_text(RECORDER.format(folder=folder, python=sys.executable), encoding="utf-8")
    recorder.chmod(0o755)
    settings = workspace.install(client, "--executable", str(recorder), verify_trust=True)
    # The failing command: a script that exists but calls one that does not (a dead script
    # inside package.json). StateWise stops `npm run <missing>` before it runs (issue 10), so
    # the failure that reveals the fact has to come from a command it lets through.
    add_dead_check_script(workspace)
    steps = [shell(client, "git status"), shell(client, "python3 --version"),
             shell(client, "npm run check"), plain_write(client, workspace)]
    run = workspace.run(client, steps)
    # Read now: later tests (statewise doctor's round trip) call the recorder too.
    yield SharedRun(client, workspace, settings, steps, run, recorded_payloads(folder))


def test_a_harmless_command_and_a_plain_write_run(everyday: SharedRun):
    finished(everyday.run)
    seen = everyday.result(GIT_STATUS)
    assert "On branch main" in seen and "StateWise" not in seen, everyday.run.describe()
    assert (everyday.workspace.work / "notes.txt").read_text(encoding="utf-8") == "notes\n"
    assert "StateWise" not in everyday.result(PLAIN_WRITE)


def test_statewise_doctor_passes_on_the_configuration_the_clients_ran_with(everyday: SharedRun):
    agent = CLIENTS[everyday.client].agent
    doctor = everyday.workspace.statewise("doctor", "--agent", agent, "--project", str(everyday.workspace.work),
                                          check=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


#: Tools that change the workspace, by client, as each client names them to the model, and the
#: name the client's hook payload carries (Codex reports exec_command as "Bash"). Checked
#: against what the clients really offer and send, below.
SIDE_EFFECT_TOOLS = {
    "claude": {"Bash": "Bash", "Write": "Write", "Edit": "Edit", "NotebookEdit": "NotebookEdit"},
    "codex": {"exec_command": "Bash", "apply_patch": "apply_patch"},
    "gemini": {"run_shell_command": "run_shell_command", "write_file": "write_file", "replace": "replace"},
}


def test_statewise_guards_every_side_effecting_tool_the_client_offers(everyday: SharedRun):
    client, offered = everyday.client, set(everyday.run.offered_tools())
    guarded = frozenset().union(*AGENT_TOOLS[CLIENTS[client].agent].values())
    pre_event = "BeforeTool" if client == "gemini" else "PreToolUse"
    matchers = [g["matcher"] for g in json.loads(everyday.settings.read_text())["hooks"][pre_event]]
    assert settings_commands(everyday.settings)[pre_event]
    for tool, hook_name in SIDE_EFFECT_TOOLS[client].items():
        assert tool in offered, f"{client} no longer offers {tool}; it offers {sorted(offered)}"
        assert hook_name in guarded, f"StateWise does not guard {client}'s {tool} (hook name {hook_name})"
        assert any(re.fullmatch(m, hook_name) for m in matchers), f"no installed matcher covers {hook_name}"
    # The hook names are the ones the client really sends.
    sent = {p["tool_name"] for p in everyday.payloads() if "tool_name" in p}
    used = {everyday.steps[i].tool for i in (GIT_STATUS, PLAIN_WRITE)}
    assert {SIDE_EFFECT_TOOLS[client][tool] for tool in used} <= sent, sent


def test_statewise_guards_no_tool_name_the_client_does_not_have(everyday: SharedRun):
    client, offered = everyday.client, set(everyday.run.offered_tools())
    guarded = frozenset().union(*AGENT_TOOLS[CLIENTS[client].agent].values())
    real_names = offered | {p["tool_name"] for p in everyday.payloads() if "tool_name" in p}
    assert guarded <= real_names, (f"StateWise guards {client} tools the client does not have: "
                                   f"{sorted(guarded - real_names)}; the client offers {sorted(offered)}")


def test_post_tool_capture_of_a_succeeding_and_a_failing_command(everyday: SharedRun):
    workspace, run = everyday.workspace, everyday.run
    assert "Missing script" in everyday.result(NPM_MISSING), run.describe()
    # The version the command printed in the client's shell (Codex runs `bash -lc`, whose login
    # profile may put another python3 first on PATH than the test's own environment).
    printed = re.search(r"Python (\d+\.\d+\.\d+)", everyday.result(PYTHON_VERSION))
    assert printed, run.describe()

    (version,) = workspace.statewise_json("record", "history", "runtime.python_version", "--scope",
                                          f"workspace:{workspace.work.resolve()}")
    assert version["value"] == printed.group(1) and version["status"] == "active"
    assert version["provenance"]["source"] == "tool_output", version
    # The failing command: Claude Code reports it as PostToolUseFailure, the others as post-tool.
    history = workspace.statewise_json("record", "history", "npm.script_exists[lint]", "--scope",
                                       f"repo:{workspace.repo}")
    assert [(r["value"], r["status"]) for r in history] == [(False, "active")], (history, run.describe())
    assert history[0]["provenance"]["source"] == "tool_output"


@pytest.mark.parametrize("command", ["python3 --version", "npm run check"])
@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_the_capture_of_the_sessions_last_command_is_stored_when_the_client_exits(workspace: Workspace,
                                                                                 client: str, command: str):
    # The post-tool hooks are waited for: Claude Code kills a background (`async`) hook when a
    # `claude -p` session ends, which lost exactly this capture (benchmarks/claude_hook_cost.py
    # --async-capture); nothing may run after the capture to give it time.
    add_dead_check_script(workspace)
    workspace.install(client)
    run = workspace.run(client, [shell(client, command)])
    finished(run)
    if command == "npm run check":
        key, scope, value = "npm.script_exists[lint]", f"repo:{workspace.repo}", False
    else:
        printed = re.search(r"Python (\d+\.\d+\.\d+)", run.tool_results()[0])
        assert printed, run.describe()
        key, scope, value = "runtime.python_version", f"workspace:{workspace.work.resolve()}", printed.group(1)
    history = workspace.statewise_json("record", "history", key, "--scope", scope)
    assert [(r["value"], r["status"]) for r in history] == [(value, "active")], (history, run.describe())
    assert history[0]["provenance"]["source"] == "tool_output"


#: The events that reach the hook program for the everyday turn: the session start, then pre
#: and post around each shell command, and pre only around the write (post-tool listens to
#: shell only). The post-tool hook runs only for calls holding a literal of an observation
#: rule (Claude Code's `if` filters; Codex's and Gemini CLI's shell pre-filter in front of the
#: wrapper, and so of the recorder), so `git status` gets none.
# Each client also runs the prompt-time check (issue 23) before the model plans, and the stop
# check when the turn ends: seen here in the real clients' own event streams.
EXPECTED_EVENTS = {
    "claude": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "PostToolUse", "PreToolUse",
               "PostToolUseFailure", "PreToolUse", "Stop"],
    "codex": ["SessionStart", "UserPromptSubmit", "PreToolUse", *["PreToolUse", "PostToolUse"] * 2, "PreToolUse",
              "Stop"],
    "gemini": ["SessionStart", "BeforeAgent", "BeforeTool", *["BeforeTool", "AfterTool"] * 2, "BeforeTool",
               "AfterAgent"],
}
#: The events around a turn rather than a tool call.
TURN_EVENTS = {"SessionStart", "UserPromptSubmit", "BeforeAgent", "Stop", "AfterAgent"}


def test_the_events_and_payloads_each_client_sends(everyday: SharedRun):
    client, workspace = everyday.client, everyday.workspace
    payloads = everyday.payloads()
    events = [p.get("hook_event_name") for p in payloads]
    assert events == EXPECTED_EVENTS[client], (events, everyday.run.describe())
    calls = [p for p in payloads if p.get("hook_event_name") not in TURN_EVENTS]
    for payload in calls:
        assert payload["cwd"] == str(workspace.work), payload
        assert isinstance(payload["tool_input"], dict), payload
    pre_status = calls[0]
    assert pre_status["tool_input"].get("command") == "git status", pre_status
    post_version = calls[2]
    assert post_version["tool_input"].get("command") == "python3 --version", post_version
    if client != "claude":
        assert "Python 3." in json.dumps(post_version.get("tool_response")), post_version
    post_failed = calls[4]
    failure = post_failed.get("error") if client == "claude" else post_failed.get("tool_response")
    assert "Missing script" in json.dumps(failure), post_failed


def test_the_post_tool_hook_is_spawned_only_where_an_observation_rule_can_match(everyday: SharedRun):
    post_event = "AfterTool" if everyday.client == "gemini" else "PostToolUse"
    groups = json.loads(everyday.settings.read_text())["hooks"][post_event]
    filters = [hook.get("if") for group in groups for hook in group["hooks"]]
    commands = [hook["command"] for group in groups for hook in group["hooks"]]
    # The recorder sits behind the filter (the wrapper runs it): what it kept is what was spawned.
    spawned = [(p["hook_event_name"], p["tool_input"]["command"]) for p in everyday.payloads()
               if p.get("hook_event_name") in ("PostToolUse", "PostToolUseFailure", "AfterTool")]
    if everyday.client == "claude":
        # Claude Code's `if` filters: the harmless command spawns no post-tool hook, each
        # capturing command exactly one.
        assert filters == ["Bash(*push*)", "Bash(*python*)", "Bash(*node*)", "Bash(*npm*)"]
        assert spawned == [("PostToolUse", "python3 --version"), ("PostToolUseFailure", "npm run check")], spawned
    else:
        # Codex and Gemini CLI have no `if`: one hook whose command filters the payload in the
        # shell, on the same literals. The client accepted its `{}` for `git status` (the turn
        # finished, and that call's result reached the model unchanged).
        assert filters == [None] and post_filter_literals(commands[0]) == ("push", "python", "node", "npm")
        assert [command for _, command in spawned] == ["python3 --version", "npm run check"], spawned
        finished(everyday.run)
        seen = everyday.result(GIT_STATUS)
        assert "On branch main" in seen and "StateWise" not in seen, everyday.run.describe()


def test_claude_code_captures_once_when_two_filtered_hooks_run_for_one_command(workspace: Workspace):
    # `npm run check; echo pushed` holds two literals (npm, push): Claude Code runs both hooks,
    # in parallel, and each captures the same output. The store keeps one record, and neither
    # note tells the model the write failed.
    add_dead_check_script(workspace)
    folder = workspace.root / "payloads"
    folder.mkdir()
    recorder = workspace.root / "recording-hook"
    recorder.write_text(RECORDER.format(folder=folder, python=sys.executable), encoding="utf-8")
    recorder.chmod(0o755)
    workspace.install("claude", "--executable", str(recorder))
    run = workspace.run("claude", [shell("claude", "npm run check; echo pushed")])
    finished(run)
    posts = [p for p in recorded_payloads(folder) if p.get("hook_event_name", "").startswith("PostToolUse")]
    assert len(posts) == 2, (posts, run.describe())
    history = workspace.statewise_json("record", "history", "npm.script_exists[lint]", "--scope",
                                       f"repo:{workspace.repo}")
    assert [(r["value"], r["status"]) for r in history] == [(False, "active")], (history, run.describe())
    received = json.dumps([request.body for request in run.server.requests])
    assert "StateWise recorded from this output" in received, run.describe()
    assert "could not record" not in received, received[-4000:]


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_the_client_tells_the_developer_when_a_contract_outgrew_the_installed_capture_filters(
        workspace: Workspace, client: str):
    # The filters are written from the contract of install day (Claude Code's `if` rules, the
    # others' shell pre-filter); a contract chosen afterwards with a rule none of them lets
    # through would lose that rule's captures without a word. The session hook says so: each
    # client takes `systemMessage` beside the context, and the model receives the warning.

    agent = CLIENTS[client].agent
    workspace.install(client)
    contract = workspace.root / "team.yaml"
    contract.write_text(  # the built-in contract with one more observation rule
        "name: team\nversion: 1\nextends: coding\n"
        "observations:\n  - name: cargo_version_printed\n    description: Cargo printed its version.\n"
        "    command: '^cargo\\s+--version$'\n    output: '^cargo (?P<value>\\d+\\.\\d+\\.\\d+)'\n"
        "    key: runtime.node_version\n", encoding="utf-8")
    (workspace.work / ".statewise" / "config.toml").write_text(f'contract = "{contract}"\n', encoding="utf-8")
    run = workspace.run(client, [shell(client, "git status")])
    finished(run)
    received = json.dumps([request.body for request in run.server.requests])
    assert "cargo_version_printed" in received and f"statewise install {agent}" in received, run.describe()
    workspace.install(client)  # the fix the warning names: no warning in the next session
    run = workspace.run(client, [shell(client, "git status")])
    finished(run)
    assert "cargo_version_printed" not in json.dumps([request.body for request in run.server.requests])


def test_a_user_and_a_project_installation_capture_one_output_once(workspace: Workspace):
    # Installed for the user too (whose hooks carry no filter: each project may name its own
    # contract), Claude Code runs both installations' post-tool hooks for one command, in
    # parallel: one record, and no note about a failed write.
    add_dead_check_script(workspace)
    workspace.install("claude")
    workspace.statewise("install", "claude-code", "--user")
    user_settings = json.loads((workspace.home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert [h.get("if") for g in user_settings["hooks"]["PostToolUse"] for h in g["hooks"]] == [None]
    run = workspace.run("claude", [shell("claude", "npm run check")])
    finished(run)
    history = workspace.statewise_json("record", "history", "npm.script_exists[lint]", "--scope",
                                       f"repo:{workspace.repo}")
    assert [(r["value"], r["status"]) for r in history] == [(False, "active")], (history, run.describe())
    received = json.dumps([request.body for request in run.server.requests])
    last_turn = json.dumps(run.server.turn_requests()[-1].body)  # what the model read after the call
    assert last_turn.count("StateWise recorded from this output") == 2, last_turn[-4000:]
    assert "could not record" not in received, received[-4000:]


# --- a guarded turn: force push, protected writes, a stale developer premise --------------------


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


@dataclass
class GuardedRun(SharedRun):
    stale_id: str = ""
    remote_before: str = ""
    writes: range = range(0)


@pytest.fixture(scope="module", params=CLIENT_NAMES)
def guarded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            client_bin: Path) -> Iterator[GuardedRun]:
    client = request.param
    workspace = build_workspace(tmp_path_factory.mktemp(f"guarded-{client}"), client_bin)
    (stale,) = workspace.statewise_json("record", "history", "repository.protected", "--scope",
                                        f"repo:{workspace.repo}@main")
    add_record(workspace, "project.test_command", "npm test", f"repo:{workspace.repo}", days_old=60)
    remote_before = workspace.remote_main()
    settings = workspace.install(client)
    writes = protected_writes(client, workspace)
    steps = [shell(client, "git push --force origin main"), *writes, shell(client, "npm test")]
    run = workspace.run(client, steps)
    yield GuardedRun(client, workspace, settings, steps, run, stale_id=stale["id"], remote_before=remote_before,
                     writes=range(1, 1 + len(writes)))


def test_force_push_to_protected_main_is_denied_and_the_stale_record_repaired(guarded: GuardedRun):
    workspace, run = guarded.workspace, guarded.run
    finished(run)
    assert workspace.remote_main() == guarded.remote_before, "the force push reached the origin"
    seen = guarded.result(0)
    # The model learns of the repair before it plans (issue 23): the prompt-time check repairs
    # the stale record and the first request after the prompt carries the correction, in every
    # client (the scripted server's request log).
    first_turn = json.dumps(run.server.turn_requests()[0].body)
    assert "CORRECTED repository.protected" in first_turn and "was false, now true" in first_turn, run.describe()
    assert "no_force_push_to_protected_branch" in seen
    # ...whole: the reason's last clause arrives too (nothing cuts it short on the way).
    assert "record it with: statewise record add user.allow_force_push '<value>' --scope user:" in seen, \
        run.describe()
    assert "remote rejected" not in seen, "the push ran and the remote refused it; StateWise did not stop it"

    scope = f"repo:{workspace.repo}@main"
    history = workspace.statewise_json("record", "history", "repository.protected", "--scope", scope)
    assert [r["status"] for r in history] == ["superseded", "active"]
    old, new = history
    assert old["id"] == guarded.stale_id and old["value"] is False and old["superseded_by"] == new["id"]
    assert new["value"] is True and new["supersedes"] == old["id"]
    assert new["provenance"]["authority"] == "machine"

    lineage = json.dumps(workspace.statewise_json("record", "lineage", new["id"]))
    assert old["id"] in lineage and new["id"] in lineage and "supersede" in lineage
    assert "git.branch_protection" in lineage, "the lineage does not name the verifier's evidence"


def test_writes_into_a_protected_path_are_denied(guarded: GuardedRun):
    finished(guarded.run)
    work = guarded.workspace.work
    assert (work / PROTECTED_FILE).read_text(encoding="utf-8") == PROTECTED_TEXT, guarded.run.describe()
    for index in guarded.writes:
        step = guarded.steps[index]
        if step.tool == "Read":
            continue
        seen = guarded.result(index)
        assert "no_write_to_protected_path" in seen and "StateWise" in seen, (step.tool, guarded.run.describe())


def test_a_stale_developer_premise_reaches_the_model_as_a_question(guarded: GuardedRun):
    finished(guarded.run)
    seen = guarded.result(len(guarded.steps) - 1)
    # Claude Code gets an "ask" (which a headless run cannot answer), Codex and Gemini a deny;
    # either way the test command did not run and the model has the question and the fix.
    assert "> app@1.0.0 test" not in seen, f"npm test ran\n{guarded.run.describe()}"
    assert "StateWise needs the developer" in seen, guarded.run.describe()
    assert "statewise record add project.test_command" in seen


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
#: Faults of StateWise's own wrapper: its interpreter gone (a deleted virtual environment), an
#: interpreter that stalls before Python runs (only the wrapper's shell watchdog can end it),
#: and the hook stuck in C code that holds the interpreter lock before a tool runs (a
#: catastrophic regular expression), which no thread of the hook can interrupt.
STUCK_HOOK = ("def main(argv):\n    import re\n    if argv[1] == 'pre':\n"
              "        re.match(r'(a+)+$', 'a' * 64 + 'b')\n    print('{}')\n")
#: An interpreter that never gets to run Python (exec: the watchdog's kill reaches the sleep).
STALLED_PYTHON = "#!/bin/sh\nexec sleep 300\n"
FAULTS = ["missing_program", "missing_wrapper", *FAKES, "missing_interpreter", "stalled_interpreter", "stuck"]
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
    elif fault in ("missing_interpreter", "stalled_interpreter", "stuck"):
        workspace.install(client, "--timeout", str(FAULT_TIMEOUT))
        wrapper = workspace.work / ".statewise" / "bin" / "statewise-hook"
        text = wrapper.read_text(encoding="utf-8")
        if fault == "missing_interpreter":
            text, count = re.subn(r"^python=.*$", f"python={fakes / 'deleted-venv' / 'python3'}", text,
                                  flags=re.MULTILINE)
            assert count == 1, "the wrapper names no interpreter"
        elif fault == "stalled_interpreter":
            stalled = fakes / "stalled-venv" / "python3"
            stalled.parent.mkdir()
            stalled.write_text(STALLED_PYTHON, encoding="utf-8")
            stalled.chmod(0o755)
            text, count = re.subn(r"^python=.*$", f"python={stalled}", text, flags=re.MULTILINE)
            assert count == 1, "the wrapper names no interpreter"
        else:
            package = fakes / "stand-in" / "statewise" / "integrations"
            package.mkdir(parents=True)
            (package.parent / "__init__.py").write_text("", encoding="utf-8")
            (package / "__init__.py").write_text("", encoding="utf-8")
            (package / "hook_entry.py").write_text(STUCK_HOOK, encoding="utf-8")
            text = re.sub(r"^sys\.path\.append\(.+?\)", f"sys.path.append({str(fakes / 'stand-in')!r})", text,
                          flags=re.MULTILINE)
        wrapper.write_text(text, encoding="utf-8")
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
    if fault == "missing_wrapper":
        # As on a clone where StateWise is not set up: the first tool call is blocked, and the
        # reason the model reads says what to install.
        finished(run)
        (seen,) = run.tool_results()
        assert "StateWise is not set up on this machine" in seen, run.describe()
        assert f"statewise install {CLIENTS[client].agent}" in seen, run.describe()
        return
    if client == "gemini" and fault == "missing_interpreter" and "Agent execution blocked" in run.stdout:
        # Gemini CLI runs the prompt-time check (BeforeAgent, issue 23) before the model plans: a
        # hook that cannot start blocks the whole turn there, so no tool is even proposed.
        assert "statewise-hook" in run.stdout or "python" in run.stdout, run.describe()
        return
    finished(run)
    (seen,) = run.tool_results()
    assert "blocked" in seen.lower() and "StateWise" in seen, run.describe()
    if fault in ("slow", "stalled_interpreter"):
        # The wrapper answered at its own deadline, before the client's timeout let the tool run.
        assert f"within {FAULT_TIMEOUT - 4} s" in seen, run.describe()


# --- Codex: typing into an interactive session --------------------------------------------------------


@pytest.mark.parametrize("opening", ["python3", "python3 -c 'exec(input())'"])
def test_codex_cannot_smuggle_a_command_through_an_interactive_session(workspace: Workspace, opening: str):
    """exec_command can open a REPL on a tty and write_stdin types into it later; Codex runs
    no PreToolUse hook for write_stdin, so opening the session is the last point to stop it
    (issue 25 item 6: asked there, the question saying later input is not checked)."""
    workspace.install("codex")

    def type_into_session(results: list[str]) -> dict:
        found = re.search(r"session ID (\d+)", results[-1])
        return {"session_id": int(found.group(1)) if found else 0, "yield_time_ms": 500,
                "chars": "import pathlib; pathlib.Path('ran.txt').touch()\n"}

    run = workspace.run("codex", [Step("exec_command", {"cmd": opening, "tty": True, "yield_time_ms": 500}),
                                  Step("write_stdin", dynamic=type_into_session)])
    finished(run)
    assert not (workspace.work / "ran.txt").exists(), f"a command typed into {opening} ran\n{run.describe()}"
    opened = run.tool_results()[0]
    assert "StateWise asks the developer" in opened and "Process running with session ID" not in opened, \
        run.describe()
    assert "nothing typed into it is checked by StateWise" in opened, run.describe()


def test_codex_skips_never_reviewed_hooks_silently_and_doctor_says_so(workspace: Workspace):
    """A trusted project is not enough: Codex runs a project hook only once its hash was
    reviewed (``[hooks.state."<key>"] trusted_hash`` in config.toml, what ``/hooks`` writes).
    Without it the tool runs unguarded and Codex says nothing, so doctor must."""
    workspace.install("codex")
    workspace.forget_hook_reviews()  # the developer trusted the project but never reviewed the hooks
    run = workspace.run("codex", [shell("codex", "touch ran.txt")])
    finished(run)
    assert (workspace.work / "ran.txt").exists(), f"Codex ran a never-reviewed hook\n{run.describe()}"
    assert "StateWise" not in run.stdout + run.stderr and "hook" not in run.stderr.lower(), run.describe()
    doctor = workspace.statewise("doctor", "--agent", "codex", "--project", str(workspace.work), check=False)
    assert doctor.returncode != 0, f"doctor passed an installation Codex does not run:\n{doctor.stdout}"


# --- a stop on a wrong premise is continued once (issue 23 item 3) -------------------------------

#: The model ends its turn declining on the stale record ("main is not protected", which the
#: origin contradicts) without calling a tool: no PreToolUse hook ever sees it.
STALE_STOP = "I will stop here and not push: main is not protected, so nobody reviews what lands on it."


def test_claude_code_continues_a_stop_citing_a_corrected_record_once_and_not_twice(workspace: Workspace):
    workspace.install("claude")
    remote_before = workspace.remote_main()
    run = workspace.run("claude", [], final_text=STALE_STOP)
    assert run.returncode == 0, run.describe()
    turns = run.server.turn_requests()
    # The first request is the prompt; the Stop hook blocks the stop once, so the client asks
    # the model again with the correction; the second stop ends the turn (stop_hook_active).
    assert len(turns) == 2, run.describe()
    continuation = "StateWise: your last message stops on a fact it has corrected on evidence"
    first, second = (json.dumps(turn.body) for turn in turns)
    assert continuation not in first
    assert continuation in second and "repository.protected in" in second and "was false, now true" in second, \
        run.describe()
    assert second.count(continuation) == 1
    assert workspace.remote_main() == remote_before and run.server.tool_results() == []  # no tool ran


@pytest.mark.parametrize("fault", ["explicitly untrusted", "trusted parent only"])
def test_doctors_fix_for_an_untrusted_codex_project_is_the_one_codex_honours(workspace: Workspace, fault: str):
    """Issue 25 item 8: doctor's fix for an untrusted project must make the real Codex load the
    hooks. Doctor asks Codex itself (app-server hooks/list) before and after the fix is applied."""
    workspace.install("codex", verify_trust=True)  # trusted, the hooks reviewed (written to config.toml)
    config = workspace.codex_home / "config.toml"
    table = f"[projects.{json.dumps(str(workspace.work))}]"
    text = config.read_text(encoding="utf-8")
    assert table in text
    if fault == "explicitly untrusted":
        text = text.replace(f'{table}\ntrust_level = "trusted"', f'{table}\ntrust_level = "untrusted"')
    else:
        text = text.replace(table, f"[projects.{json.dumps(str(workspace.work.parent))}]")
    config.write_text(text, encoding="utf-8")
    report = json.loads(workspace.statewise("doctor", "--agent", "codex", "--project", str(workspace.work), "--json",
                                            check=False).stdout)
    checks = {check["name"]: check for check in report["checks"]}
    assert not checks["project trust"]["ok"] and not checks["hook trust"]["ok"], report
    fix = checks["project trust"]["fix"]
    assert checks["hook trust"]["fix"] == fix  # not `statewise install`, which would change nothing
    if fault == "explicitly untrusted":
        assert fix == f'in {config}, under {table}, set trust_level = "trusted"'
        config.write_text(text.replace('trust_level = "untrusted"', 'trust_level = "trusted"'), encoding="utf-8")
    else:
        assert fix.startswith(f"add to {config}:\n")
        config.write_text(text + fix.partition(":\n")[2] + "\n", encoding="utf-8")
    after = json.loads(workspace.statewise("doctor", "--agent", "codex", "--project", str(workspace.work), "--json",
                                           check=False).stdout)
    fixed = {check["name"]: check for check in after["checks"]}
    assert fixed["project trust"]["ok"] and fixed["hook trust"]["ok"], (fixed["project trust"], fixed["hook trust"])
    assert "asked codex app-server" in fixed["hook trust"]["detail"]
