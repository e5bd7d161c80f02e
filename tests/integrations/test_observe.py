"""A push rejection captured after a tool ran is machine evidence (issue 10, item 3).

Each hosting service's refusal is reproduced by a real pre-receive hook on a real bare
origin that prints what the service prints; a real ``git push`` is refused, and its real
output goes through the post-tool hook entry point into the store."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewise.contract import builtin_contract, load_contract_text
from statewise.integrations.hooks import run_hook
from statewise.integrations.observe import match_observations
from statewise.scopes import TaskScope
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope
from tests.verifiers.helpers import commit, git, make_repo

GITHUB_CLASSIC = """echo "remote: error: GH006: Protected branch update failed for $ref." >&2
echo "remote: error: Changes must be made through a pull request." >&2"""
GITHUB_RULESET = """echo "remote: error: GH013: Repository rule violations found for $ref." >&2
echo "remote: Review all repository rules at https://github.com/acme/app/rules?ref=$ref" >&2
echo "remote: " >&2
echo "remote: - Changes must be made through a pull request." >&2"""
GITLAB = """echo "GitLab: You are not allowed to push code to protected branches on this project." >&2"""


def refusing_origin(root: Path, message: str, condition: str = '[ "$ref" = refs/heads/main ]'):
    repo = make_repo(root)
    hook = repo.origin / "hooks" / "pre-receive"
    hook.write_text(f"""#!/bin/sh
status=0
while read old new ref; do
    if {condition}; then
{message}
        status=1
    fi
done
exit $status
""", encoding="utf-8")
    hook.chmod(0o755)
    commit(repo.work, "x.txt", "x")
    git(repo.work, "switch", "-q", "feature")
    commit(repo.work, "y.txt", "y")
    git(repo.work, "switch", "-q", "main")
    return repo


def push(repo, *refs: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", "push", "origin", *refs], cwd=repo.work, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    return done


def capture(repo, command: str, done, store_path: Path) -> str:
    payload = {"session_id": "s", "cwd": str(repo.work), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}, "tool_use_id": "toolu_7",
               "tool_response": {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}}
    out = run_hook("claude-code", json.dumps(payload), event="post", store_location=str(store_path))
    return json.loads(out.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")


def active(store_path: Path, scope: str):
    store = SQLiteStore(str(store_path))
    try:
        return store.get_active("repository.protected", scope)
    finally:
        store.close()


@pytest.mark.parametrize("message", [GITHUB_CLASSIC, GITHUB_RULESET, GITLAB], ids=["GH006", "GH013", "gitlab"])
def test_a_refused_push_records_protection_with_provenance(tmp_path: Path, message: str):
    repo = refusing_origin(tmp_path / "sb", message)
    done = push(repo, "main")
    note = capture(repo, "git push origin main", done, tmp_path / "store.db")
    repo_id = derive_task_scope(repo.work).repo
    assert "repository.protected" in note
    record = active(tmp_path / "store.db", f"repo:{repo_id}@main")
    assert record is not None and record.value is True
    assert record.provenance.source.value == "tool_output" and record.provenance.authority.value == "machine"
    assert record.provenance.reference == "toolu_7"


def test_gitlab_refusal_of_several_refs_is_not_attributed(tmp_path: Path):
    # GitLab's message names no branch and pre-receive declines every ref of the push: which
    # one is protected cannot be told, so nothing is recorded (feature must not become protected).
    repo = refusing_origin(tmp_path / "sb", GITLAB)
    done = push(repo, "main", "feature")
    assert done.stderr.count("[remote rejected]") == 2
    assert capture(repo, "git push origin main feature", done, tmp_path / "store.db") == ""
    repo_id = derive_task_scope(repo.work).repo
    assert active(tmp_path / "store.db", f"repo:{repo_id}@feature") is None


def test_github_names_every_refused_branch(tmp_path: Path):
    repo = refusing_origin(tmp_path / "sb", GITHUB_CLASSIC, condition="true")
    done = push(repo, "main", "feature")
    capture(repo, "git push origin main feature", done, tmp_path / "store.db")
    repo_id = derive_task_scope(repo.work).repo
    for branch in ("main", "feature"):
        record = active(tmp_path / "store.db", f"repo:{repo_id}@{branch}")
        assert record is not None and record.value is True, branch


def test_content_rules_and_unrelated_output_record_nothing(tmp_path: Path):
    contract = builtin_contract("coding")
    scope = derive_task_scope(make_repo(tmp_path / "r").work)
    content_rule = ("remote: error: GH013: Repository rule violations found for refs/heads/main.\n"
                    "remote: - Commit message must match a given regex pattern\n")
    assert match_observations(contract, "git push origin main", content_rule, scope) == []
    assert match_observations(contract, "git log", "GH006: Protected branch update failed for refs/heads/main.",
                              scope) == []
    found = match_observations(contract, "git push origin main",
                               " ! [remote rejected] main -> main (protected branch hook declined)\n", scope)
    assert [(f.key, f.value, f.scope) for f in found] == [("repository.protected", True, f"repo:{scope.repo}@main")]


def test_a_refusal_by_another_remote_lands_on_that_repository(tmp_path: Path):
    repo = make_repo(tmp_path / "sb")
    fork = refusing_origin(tmp_path / "fork", GITHUB_CLASSIC)  # its origin.git refuses main
    git(repo.work, "remote", "add", "fork", str(fork.origin))
    commit(repo.work, "mine.txt", "only here")
    done = subprocess.run(["git", "push", "--force", "fork", "main"], cwd=repo.work,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "GH006" in done.stderr and f"To {fork.origin}" in done.stderr
    capture(repo, "git push --force fork main", done, tmp_path / "store.db")
    origin_id = derive_task_scope(repo.work).repo
    fork_id = derive_task_scope(fork.work).repo
    assert origin_id != fork_id
    assert active(tmp_path / "store.db", f"repo:{origin_id}@main") is None
    record = active(tmp_path / "store.db", f"repo:{fork_id}@main")
    assert record is not None and record.value is True


def test_output_naming_several_destinations_is_not_attributed():
    contract = builtin_contract("coding")
    from statewise.scopes import TaskScope

    scope = TaskScope(workspace="/w", repo="github.com/acme/app", branch="main")
    output = ("remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
              "To github.com:acme/app.git\n ! [remote rejected] main -> main (protected branch hook declined)\n"
              "To github.com:someone/fork.git\n   1234567..89abcde  main -> main\n")
    assert match_observations(contract, "git push origin main && git push fork main", output, scope) == []
    one = output.split("To github.com:someone")[0]
    found = match_observations(contract, "git push git@github.com:acme/app.git main", one, scope)
    assert {(f.key, f.scope) for f in found} == {("repository.protected", "repo:github.com/acme/app@main")}


PATHOLOGICAL_RULES = """
extends: coding
name: patterns
version: 1
observations:
  - name: catastrophic
    command: '^git push'
    output: '^((a|aa)+)$'
    key: repository.protected
    value: true
  - name: ordinary
    command: '^git push'
    output: 'protected branch hook declined'
    key: repository.protected
    value: true
"""


def test_a_pathological_observation_pattern_is_cut_off_and_the_others_still_match():
    contract = load_contract_text(PATHOLOGICAL_RULES, "patterns.yaml")
    task = TaskScope(user="dev", repo="github.com/acme/app", branch="main")
    output = "a" * 5000 + "!\nremote: error: protected branch hook declined\n"
    start = time.monotonic()
    found = match_observations(contract, "git push origin main", output, task)
    assert time.monotonic() - start < 2.0
    names = [fact.rule.name for fact in found]
    assert "catastrophic" not in names and "ordinary" in names


def test_hooks_capturing_one_output_in_parallel_leave_one_record_and_no_failed_write(tmp_path: Path):
    # Claude Code runs one post-tool hook per matching `if` filter, at the same time: a command
    # holding two literals is captured by two processes. Six real processes race here on one
    # store; the losers' writes become confirmations of the winner's record.
    repo = refusing_origin(tmp_path / "sb", GITLAB)
    done = push(repo, "main")
    store_path = tmp_path / "store.db"
    SQLiteStore(str(store_path)).close()
    payload = {"session_id": "s", "cwd": str(repo.work), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "git push origin main"}, "tool_use_id": "toolu_7",
               "tool_response": {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}}
    script = ("import json, sys\nfrom statewise.integrations.hooks import run_hook\n"
              "out = run_hook('claude-code', sys.stdin.read(), event='post', store_location=sys.argv[1])\n"
              "print(json.loads(out.stdout)['hookSpecificOutput']['additionalContext'])\n")
    racers = [subprocess.Popen([sys.executable, "-c", script, str(store_path)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
    for racer in racers:  # all started before any is fed: they read the store at about the same time
        assert racer.stdin is not None
        racer.stdin.write(json.dumps(payload))
        racer.stdin.close()
    notes = []
    for racer in racers:
        assert racer.stdout is not None
        notes.append(racer.stdout.read())
        racer.wait(timeout=120)
    assert all(racer.returncode == 0 for racer in racers), notes
    assert all("repository.protected" in note and "could not record" not in note for note in notes), notes
    repo_id = derive_task_scope(repo.work).repo
    store = SQLiteStore(str(store_path))
    try:
        history = store.history("repository.protected", f"repo:{repo_id}@main")
    finally:
        store.close()
    assert [(record.value, record.status.value) for record in history] == [(True, "active")]
