"""What each real client puts in its shell tool's environment, and what the hook makes of it.

Claude Code 2.1 runs its Bash tool with ``GIT_EDITOR=true`` (its bundle spawns the shell with
that variable; the hook itself sees only the client's own environment). So an interactive
rebase that only needs its generated todo list (``git rebase -i --autosquash``) opens no
editor there and must not be stopped as an interactive session; in Codex and Gemini CLI the
same command would open vi on a terminal the hook cannot see, and is stopped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from statewise.sandbox import git
from tests.e2e.conftest import build_workspace
from tests.e2e.test_real_clients import CLIENT_NAMES, finished, shell

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REBASE = "git rebase -i --autosquash HEAD~2"


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_an_autosquash_rebase_runs_where_the_client_sets_a_no_op_editor(client: str, tmp_path: Path,
                                                                       client_bin: Path):
    workspace = build_workspace(tmp_path, client_bin)
    workspace.install(client, verify_trust=True)
    work = workspace.work
    git(work, "switch", "--quiet", "-c", "feature")
    for message in ("notes", "fixup! notes"):
        (work / "notes.txt").write_text(f"{message}\n", encoding="utf-8")
        git(work, "add", "notes.txt")
        git(work, "commit", "--quiet", "-m", message)
    run = workspace.run(client, [shell(client, "printenv GIT_EDITOR || echo unset"), shell(client, REBASE)])
    finished(run)
    editor, rebase = run.tool_results()
    subjects = git(work, "log", "--format=%s", "-3").splitlines()
    if client == "claude":
        assert editor.strip().splitlines()[-1] == "true", run.describe()
        assert "StateWise" not in rebase, run.describe()
        assert subjects[0] == "notes" and "fixup! notes" not in subjects, subjects  # squashed
    else:
        assert "unset" in editor, run.describe()
        assert "StateWise" in rebase and "editor" in rebase, run.describe()
        assert subjects[:2] == ["fixup! notes", "notes"], subjects  # nothing ran
