"""Cannot check, through the installed hook (issue 22, item 5).

A command StateWise cannot read is no reason to stop work when nothing about it can be
dangerous, and is asked when its words name what the developer protects:

* an option the table of a program with no known effect option lacks (``ls -a.git``, a newer
  ``grep`` flag) is checked as an unknown program: it passes, unless its words name a protected
  path (asked, naming the record and the target) or a secret (asked);
* an option of a program that has options with effects (``sort -o``), and a value only known at
  run time where a guarded effect needs it (a sed script with ``$X``), stay "cannot check"
  (denied: the unknown part may be the effect);
* a ``$`` inside double quotes that starts no expansion (``sed -i "s/ *$//"``) is a literal for
  bash, and the command is read (and checked) like its single-quoted form;
* ``tail -n +2`` after a pipe: ``+2`` is the value of ``-n``, not a count.

Each command goes through the wrapper ``statewise install`` writes, as Claude Code runs it (a
real subprocess, the PreToolUse JSON on stdin), in a real repository with a bare origin and a
store holding the developer's ``fs.protected_paths``.
"""

from __future__ import annotations

import pytest

from tests.integrations.installed import Project, make_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(tmp_path_factory.mktemp("cannot-check"), protected=[".env", "migrations"])


@pytest.mark.parametrize("command", [
    "ls -a.git",  # a typing slip: ls has no option with an effect
    "grep --no-such-flag TODO src/app.py",
    "cat -Q src/app.py",
    "cat src/app.py | tail -n +2",
    "cat src/app.py | head -n -1",
    'sed -i "s/ *$//" src/app.py',  # the `$` is a regular-expression anchor, literal for bash
])
def test_a_harmless_command_statewise_cannot_fully_read_passes(project, command):
    answer = project.bash(command)
    assert answer.decision == "defer", answer.reason


def test_the_same_unreadable_option_naming_a_protected_path_is_asked_with_the_record(project):
    answer = project.bash("ls -a.git migrations")
    assert answer.decision == "ask", answer.reason
    assert "fs.protected_paths" in answer.reason and "migrations" in answer.reason
    answer = project.bash("head --no-such-flag migrations/0001.sql")
    assert answer.decision == "ask" and "migrations/0001.sql" in answer.reason, answer.reason


def test_the_same_unreadable_option_naming_a_secret_is_asked(project):
    answer = project.bash("cat -Q .env")
    assert answer.decision == "ask", answer.reason
    assert ".env" in answer.reason and "secret" in answer.reason


@pytest.mark.parametrize("command", [
    "sort --no-such-flag src/app.py",  # sort -o writes: an unknown option may be such an option
    'sed -i "s/$OLD/new/" src/app.py',  # the script is only known at run time
])
def test_what_may_hide_an_effect_stays_cannot_check(project, command):
    answer = project.bash(command)
    assert answer.decision == "deny", answer.reason
    assert "cannot check" in answer.reason


def test_a_literal_dollar_does_not_hide_the_write_it_makes(project):
    # Read, the write is checked like any other: a protected path is refused by the invariant.
    answer = project.bash('sed -i "s/ *$//" migrations/0001.sql')
    assert answer.decision == "deny", answer.reason
    assert "no_write_to_protected_path" in answer.reason


def _protected_record_id(project) -> str:
    from statewise.contract import builtin_contract
    from statewise.store.sqlite import SQLiteStore
    from statewise.workspace import derive_task_scope

    store = SQLiteStore(str(project.work / ".statewise" / "store.db"), key_schema=builtin_contract())
    try:
        record = store.retrieve(derive_task_scope(project.work), keys=["fs.protected_paths"]).get("fs.protected_paths")
    finally:
        store.close()
    assert record is not None
    return record.id


@pytest.mark.parametrize("command, target", [
    ("sort --no-such-flag migrations/0001.sql", "migrations/0001.sql"),
    ("find . -name '*.sql' | xargs rm migrations/0001.sql", "migrations/0001.sql"),
    ("bash -c 'find . | xargs rm -rf migrations'", "migrations"),
])
def test_a_cannot_check_deny_names_the_protected_target_and_its_record(project, command, target):
    answer = project.bash(command)
    assert answer.decision == "deny" and "cannot check" in answer.reason, answer.reason
    assert f"It names {target}, which record {_protected_record_id(project)} (fs.protected_paths)" in answer.reason


def test_a_cannot_check_deny_naming_nothing_protected_names_no_record(project):
    answer = project.bash("sort --no-such-flag src/app.py")
    assert answer.decision == "deny" and "cannot check" in answer.reason, answer.reason
    assert "fs.protected_paths" not in answer.reason and "It names" not in answer.reason


def test_an_unknown_program_naming_a_protected_path_is_asked_with_the_record_id(project):
    answer = project.bash("ls -a.git migrations")
    assert answer.decision == "ask", answer.reason
    assert _protected_record_id(project) in answer.reason and "migrations" in answer.reason
