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
    settings = workspace.install(client)
    run = workspace.run(client, [shell(client, "git status")])
    finished(run)
    results = run.tool_results()
    assert len(results) == 1 and "On branch main" in results[0], run.describe()
    assert "StateWise" not in results[0]

    offered = set(run.offered_tools())
    agent = CLIENTS[client].agent
    guarded = AGENT_TOOLS[agent]["shell"] | AGENT_TOOLS[agent]["file"]
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
