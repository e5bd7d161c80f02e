"""What the hook keeps between calls never turns a protected delete into a pass (issue 25).

The sequence an agent follows after a deny: a guarded call from the repository root (denied),
then the same file deleted from a subdirectory. The store kept `workspace.root` (and other
machine facts about a directory) from the first call; inherited by the subdirectory's scope,
it made `rm 0001.sql` in `migrations/` a delete of `<root>/0001.sql`, and it passed."""

from __future__ import annotations

import pytest

from tests.integrations.installed import make_project

FIRST_CALLS = ["rm .env", "rm -rf migrations", "echo x > config/prod.yaml", "git status --short"]


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm worker"])
@pytest.mark.parametrize("first", FIRST_CALLS)
def test_a_protected_delete_from_a_subdirectory_stays_denied_after_a_call_from_the_root(tmp_path, first, warm):
    project = make_project(tmp_path, protected=[".env", "migrations"], warm=warm)
    project.bash(first)
    for attempt in range(2):  # the same session, then again once the subdirectory's facts are stored
        answer = project.bash("rm 0001.sql", "migrations")
        assert answer.decision == "deny", (attempt, answer)
        assert "rotected" in answer.reason
    assert (project.work / "migrations" / "0001.sql").exists()


def test_the_project_protected_file_is_read_at_the_root_from_a_subdirectory(tmp_path):
    project = make_project(tmp_path, protected=None)
    (project.work / ".statewise" / "protected").write_text("config/prod.yaml\n")
    project.bash("ls")
    answer = project.bash("echo x > prod.yaml", "config")
    assert answer.decision == "deny", answer
    assert "prod.yaml" in answer.reason


def test_ordinary_deletes_in_a_subdirectory_still_pass_after_a_call_from_the_root(tmp_path):
    project = make_project(tmp_path, protected=[".env", "migrations"])
    (project.work / "src" / "scratch.txt").write_text("x\n")
    project.bash("rm .env")
    answer = project.bash("rm scratch.txt", "src")
    assert answer.decision != "deny", answer
