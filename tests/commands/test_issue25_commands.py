"""Every command issue 25 lists under "Why" is stopped or asked through the installed hook, the
answer naming the protected target: a real repository with a real bare origin (which protects
main), fs.protected_paths = [.env, migrations, config/prod.yaml] on record."""

from __future__ import annotations

import pytest

from statewise.commands import analyze_command
from statewise.sandbox import git
from tests.integrations.installed import make_project

PROTECTED = [".env", "migrations", "config/prod.yaml"]

# (command, the answer, a piece the reason must hold)
STOPPED = [
    ("pushd config >/dev/null && : > prod.yaml", "deny", "config/prod.yaml"),
    ("cd config && echo x > prod.yaml", "deny", "config/prod.yaml"),
    ("GIT_TRACE=$PWD/.env git status", "deny", ".env"),
    ("GIT_INDEX_FILE=.env git read-tree HEAD", "deny", ".env"),
    ("tar -cf /dev/null README.md --checkpoint=1 --checkpoint-action=exec='rm -f .env'", "deny", "rm -f .env"),
    ("awk '{print > \".env\"}' README.md", "deny", ".env"),  # read as the write it is (inside awk)
    ("cp /bin/rm build/tidy && build/tidy -rf migrations", "deny", "build/tidy"),
    ("tar --remove-files -cf build/m.tar migrations", "deny", "migrations"),
    ("tar -cf build/m.tar migrations --remove-files", "deny", "migrations"),
    ("git reflog expire --expire=now --all && git gc --prune=now", "deny", "git reflog expire"),
    ("git gc --prune=now", "deny", "git gc --prune"),
    ("git prune", "deny", "git prune"),
    ("pipx install black", "deny", "pipx install"),
    ("easy_install requests", "deny", "easy_install"),
    ("python3 setup.py install", "deny", "setup.py install"),
    ("git --git-dir=../origin.git update-ref refs/heads/main refs/heads/feature", "deny", "origin.git/main"),
    ("git -C ../origin.git branch -f main feature", "deny", "origin.git/main"),
    ("git -C ../origin.git update-ref -d refs/heads/main", "deny", "origin.git/main"),
    ("git rev-parse feature > ../origin.git/refs/heads/main", "deny", "origin.git/refs/heads/main"),
    ("git checkout old -- migrations config", "ask", "protected paths (migrations, config/prod.yaml"),
    ("git restore --source=HEAD~1 -- migrations", "ask", "protected paths (migrations"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("why"), protected=PROTECTED)


@pytest.mark.parametrize(("command", "decision", "named"), STOPPED, ids=[c for c, _, _ in STOPPED])
def test_each_command_is_stopped_or_asked_naming_the_target(project, command, decision, named):
    answer = project.bash(command)
    assert answer.decision == decision, answer
    assert named in answer.reason, answer


def test_the_protected_branch_of_the_origin_did_not_move(project):
    before = git(project.origin, "rev-parse", "main")
    for command, _, _ in STOPPED:
        if "origin.git" in command:
            assert project.bash(command).decision == "deny"
    assert git(project.origin, "rev-parse", "main") == before


ORDINARY = ["tar -czf build/src.tgz src", "tar -tzf build/src.tgz", "git gc", "git reflog", "pipx list",
            "python3 setup.py --version", "git branch topic", "git -C ../origin.git log --oneline -1",
            "cd src && echo x > notes.txt", "git restore src/app.py"]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_forms_are_not_denied(project, command):
    answer = project.bash(command)
    assert answer.decision != "deny", answer


def test_a_ref_written_in_another_repository_is_read_as_a_push(tmp_path):
    project = make_project(tmp_path, protected=None)
    work = project.work
    actions = analyze_command("git -C ../origin.git branch -m feature renamed", cwd=work, workspace=work).actions
    assert [(a.operation, a.args["branch"], a.args.get("delete")) for a in actions] == [
        ("git.push", "renamed", None), ("git.push", "feature", True)]
    own = analyze_command("git update-ref refs/heads/topic HEAD", cwd=work, workspace=work).actions
    assert [a.operation for a in own] == ["git.branch_create"]
