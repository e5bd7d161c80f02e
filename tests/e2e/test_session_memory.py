"""The repaired memory reaching the real clients' model at session start (issue 12, item 5).

Each client starts in a repository whose memory file (the one that client loads itself:
CLAUDE.md, AGENTS.md, GEMINI.md) says the tests run with ``npm run test:unit``, while
``package.json`` only has ``test``. Two runs per client, no tool calls:

1. The first run: StateWise's SessionStart hook (as ``statewise install`` registers it) names
   the line as wrong, with the correction, and the scripted model server sees that text in the
   client's first request.
2. The developer then applies the correction (``statewise memory check --apply --yes``: the
   file is the developer's, so it is written only with their approval, which ``--yes`` is;
   docs/memory.md, Write-back). The second run's first request carries the corrected line,
   which the client read from the memory file itself, and not the old one.

What each client did is in tests/e2e/OBSERVED.md, with the size of the injected context.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from statewise.integrations.hooks import SESSION_CONTEXT_CHARS, SESSION_CONTEXT_TOKENS
from statewise.memory.context import estimate_tokens
from statewise.sandbox import git
from tests.e2e.clients import ClientRun, Workspace
from tests.e2e.conftest import build_workspace
from tests.e2e.model_server import FINAL_TEXT, RecordedRequest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CLIENT_NAMES = ["claude", "codex", "gemini"]

#: The memory file each client loads by itself from the project root.
MEMORY_FILE = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md"}

STALE_LINE = "The tests run with `npm run test:unit`."
FIXED_LINE = "The tests run with `npm test`."
MEMORY_TEXT = f"# Project notes\n\n## Testing\n\n{STALE_LINE}\n"

#: Hook program installed with --executable: the real hook, with its answer kept in a file
#: (so the test can measure what StateWise injected, before the client wraps it).
RECORDER = """#!/bin/sh
out=$(mktemp "{folder}/{{}}.$2.XXXXXX")
{python} -m statewise.integrations.hook_entry "$@" >"$out"
status=$?
cat "$out"
exit $status
"""


def strings(value: Any) -> Iterator[str]:
    """Every string in a request body (so JSON escaping does not hide a quote or a backtick)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def first_turn(run: ClientRun) -> RecordedRequest:
    """The client's first request for its main turn (the first one that offers tools)."""
    turns = run.server.turn_requests()
    assert turns, run.describe()
    return turns[0]


def first_text(run: ClientRun) -> str:
    return "\n".join(strings(first_turn(run).body))


@dataclass
class SessionRuns:
    client: str
    workspace: Workspace
    memory: Path
    first: ClientRun
    first_context: str  # the additionalContext StateWise's hook answered in the first run
    apply_output: str
    second: ClientRun
    second_context: str


def hook_context(folder: Path, run_label: str) -> str:
    """The additionalContext the session hook answered during one run ("" when none)."""
    answers = [json.loads(p.read_text(encoding="utf-8") or "{}") for p in sorted(folder.glob(f"{run_label}.session.*"))]
    assert len(answers) == 1, f"expected one SessionStart hook call in {run_label}, got {len(answers)}"
    return answers[0].get("hookSpecificOutput", {}).get("additionalContext", "")


def two_sessions(workspace: Workspace, client: str, memory: Path, *apply_options: str) -> SessionRuns:
    """Install the hooks, run the client, apply the correction with ``statewise memory check
    --apply *apply_options``, run the client again."""
    folder = workspace.root / "answers"
    folder.mkdir()
    recorder = workspace.root / "recording-hook"

    def run(label: str) -> ClientRun:
        # The recorder names its answer files by run: re-point it before each run.
        recorder.write_text(RECORDER.format(folder=folder, python=sys.executable).replace("{}", label),
                            encoding="utf-8")
        recorder.chmod(0o755)
        return workspace.run(client, [])

    recorder.write_text(RECORDER.format(folder=folder, python=sys.executable), encoding="utf-8")
    recorder.chmod(0o755)
    workspace.install(client, "--executable", str(recorder), verify_trust=True)
    first = run("first")
    first_context = hook_context(folder, "first")
    applied = workspace.statewise("memory", "check", "--apply", *apply_options, check=False)
    second = run("second")
    return SessionRuns(client, workspace, memory, first, first_context, applied.stdout + applied.stderr, second,
                       hook_context(folder, "second"))


@pytest.fixture(scope="module", params=CLIENT_NAMES)
def sessions(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
             client_bin: Path) -> SessionRuns:
    """The developer's committed memory file; the developer approves the edit (``--yes``)."""
    client = request.param
    workspace = build_workspace(tmp_path_factory.mktemp(f"session-{client}"), client_bin)
    memory = workspace.work / MEMORY_FILE[client]
    memory.write_text(MEMORY_TEXT, encoding="utf-8")
    git(workspace.work, "add", memory.name)
    git(workspace.work, "commit", "--quiet", "-m", f"{memory.name}: how to run the tests")
    return two_sessions(workspace, client, memory, "--yes")


def test_the_wrong_memory_line_and_its_correction_reach_the_model_at_session_start(sessions: SessionRuns):
    run = sessions.first
    assert run.returncode == 0 and FINAL_TEXT in run.stdout, run.describe()
    context = sessions.first_context
    name = MEMORY_FILE[sessions.client]
    # What StateWise answered: the line, named wrong, with the correction.
    assert f'{name}:5 "{STALE_LINE}" is wrong' in context, context
    assert "npm.script_exists[test:unit] is false" in context and "Use: npm test" in context, context
    seen = first_text(run)
    # The client loaded its memory file itself (the stale line is in the prompt)...
    assert STALE_LINE in seen, run.describe()
    # ...and delivered StateWise's note to the model in the same, first request.
    assert f'{name}:5 "{STALE_LINE}" is wrong' in seen, (
        f"{sessions.client} did not deliver the SessionStart additionalContext to the model\n"
        f"hook answered: {context!r}\nfirst request: {seen[-3000:]}")
    assert "Use: npm test" in seen


def test_the_repaired_line_is_what_the_next_session_reads(sessions: SessionRuns):
    name = MEMORY_FILE[sessions.client]
    assert sessions.memory.read_text(encoding="utf-8") == MEMORY_TEXT.replace(STALE_LINE, FIXED_LINE), \
        sessions.apply_output
    assert f"{name}:5: applied" in sessions.apply_output, sessions.apply_output
    run = sessions.second
    assert run.returncode == 0 and FINAL_TEXT in run.stdout, run.describe()
    seen = first_text(run)
    assert FIXED_LINE in seen, f"the client did not read the corrected {name}\n{seen[-3000:]}"
    assert STALE_LINE not in seen, f"the second session still reads the old line\n{seen[-3000:]}"
    # Nothing is left to call wrong: the repaired line is valid, so StateWise names no wrong line.
    assert "WRONG lines" not in sessions.second_context, sessions.second_context


def placements(client: str, body: dict[str, Any], context: str, memory: Path) -> dict[str, Any]:
    """Where the client put its memory file and StateWise's note in its first request: the
    message index and role of each, and the bytes the client wrapped around the note."""

    def text(content: Any) -> str:
        if isinstance(content, str):
            return content
        return "\n".join(block.get("text", "") for block in content or [] if isinstance(block, dict))

    if client == "claude":
        messages = [(m.get("role"), text(m.get("content"))) for m in body["messages"]]
        memory_mark, note_mark = f"Contents of {memory} (project instructions", \
            f"SessionStart hook additional context: {context}"
    elif client == "codex":
        messages = [(m.get("role"), text(m.get("content"))) for m in body["input"]
                    if m.get("type") == "message"]
        memory_mark, note_mark = f"# AGENTS.md instructions for {memory.parent}", context
    else:
        messages = [(c.get("role"), part.get("text", "")) for c in body["contents"] for part in c.get("parts", [])]
        memory_mark, note_mark = f"--- Context from: {memory} ---", f"<hook_context>{context}</hook_context>"
    found: dict[str, Any] = {}
    for index, (role, text) in enumerate(messages):
        if memory_mark in text and "memory" not in found:
            found["memory"] = (index, role)
        if note_mark in text and "note" not in found:
            found["note"] = (index, role)
            found["note_is_whole_message"] = text.strip() == note_mark
            found["wrapping_bytes"] = len(note_mark.encode()) - len(context.encode())
    return found


#: Observed with the pinned clients (OBSERVED.md): which message carries the memory file and
#: StateWise's note (index, role) in the first request, and whether the note is a message alone.
PLACEMENT = {
    "claude": {"memory": (0, "user"), "note": (1, "system"), "note_is_whole_message": False, "wrapping_bytes": 38},
    "codex": {"memory": (2, "user"), "note": (3, "developer"), "note_is_whole_message": True, "wrapping_bytes": 0},
    "gemini": {"memory": (0, "user"), "note": (1, "user"), "note_is_whole_message": False, "wrapping_bytes": 29},
}


def test_where_each_client_puts_the_memory_file_and_the_note(sessions: SessionRuns):
    body = first_turn(sessions.first).body
    found = placements(sessions.client, body, sessions.first_context, sessions.memory)
    assert found == PLACEMENT[sessions.client], found
    # The file the client loaded comes first, the correction after it, in every client.
    assert found["memory"][0] < found["note"][0]


def test_the_injected_context_size(sessions: SessionRuns):
    """Bytes and estimated tokens (docs/memory.md's estimator) of what the hook injected, for
    OBSERVED.md and docs/memory.md; within the hook's budget."""
    context, second = sessions.first_context, sessions.second_context
    wrapping = PLACEMENT[sessions.client]["wrapping_bytes"]
    print(f"\n[{sessions.client}] injected context: {len(context.encode())} bytes, {estimate_tokens(context)} est. "
          f"tokens (+{wrapping} bytes the client wraps it in); after the repair: {len(second.encode())} bytes, "
          f"{estimate_tokens(second)} est. tokens; seconds: first run {sessions.first.seconds:.1f}, "
          f"second {sessions.second.seconds:.1f}")
    # The hook's budget: 400 estimated tokens for the memory part, the corrections line within 2000 characters.
    assert 0 < estimate_tokens(context) <= SESSION_CONTEXT_TOKENS + SESSION_CONTEXT_CHARS // 3, context
    assert 0 < len(second) < len(context), second


# --- Claude Code's auto memory: the agent's own file, written back without asking ------------


def test_claude_code_auto_memory_is_corrected_without_asking_and_read_corrected(workspace: Workspace):
    """Claude Code's auto memory (``~/.claude/projects/<project>/memory/MEMORY.md``, which it
    loads in ``-p`` too) holds the stale line; the project's policy is ``auto``, so ``memory check
    --apply`` writes the agent's own file without asking (no ``--yes``, no terminal), and the
    next session reads the corrected line. (One client run: that the note reaches Claude Code's
    model is the test above.)"""
    (workspace.work / "pyproject.toml").write_text('[tool.statewise]\nmemory-write-back = "auto"\n', encoding="utf-8")
    git(workspace.work, "add", "pyproject.toml")
    git(workspace.work, "commit", "--quiet", "-m", "StateWise may correct the agent's own memory")
    project = re.sub(r"[^A-Za-z0-9]", "-", str(workspace.work.resolve()))
    memory = workspace.home / ".claude" / "projects" / project / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(MEMORY_TEXT, encoding="utf-8")
    workspace.install("claude")
    context = workspace.statewise("memory", "context").stdout
    assert f'MEMORY.md:5 "{STALE_LINE}" is wrong' in context, context

    applied = workspace.statewise("memory", "check", "--apply", check=False)
    output = applied.stdout + applied.stderr
    assert memory.read_text(encoding="utf-8") == MEMORY_TEXT.replace(STALE_LINE, FIXED_LINE), output
    assert "MEMORY.md:5: applied" in output and "approval" not in output, output

    run = workspace.run("claude", [])
    assert run.returncode == 0 and FINAL_TEXT in run.stdout, run.describe()
    seen = first_text(run)
    assert f"Contents of {memory} (user's auto-memory" in seen, run.describe()
    assert FIXED_LINE in seen and STALE_LINE not in seen, seen[-3000:]
    assert "WRONG lines" not in seen, seen[-3000:]
