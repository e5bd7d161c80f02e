"""Real coding-agent incidents the built-in contract covers without an extension (issue 10
item 8): the default branch master vs main, an upstream that tracks the default branch, the
main checkout's .git seen from a worktree, a branch gone stale after its pull request was
merged. Each through ``run_hook`` with Claude Code's PreToolUse JSON, on real repositories
with real bare remotes, an empty SQLite store, and the verifiers reading git read-only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from statewise.integrations.hooks import run_hook

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=ENV).stdout


def make_repo(root: Path, default: str = "main") -> Path:
    origin, repo = root / "origin.git", root / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "-b", default, str(origin)], check=True)
    repo.mkdir()
    git(repo, "init", "-q", "-b", default)
    git(repo, "remote", "add", "origin", str(origin))
    (repo / "README.md").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "push", "-q", "-u", "origin", default)
    return repo


def hook(cwd: Path, store: Path, command: str) -> tuple[str | None, set[str], list]:
    """The decision, the names of the checks that failed, and the guard's decisions."""
    payload = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(cwd), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "work"}, "tool_use_id": "t1"}
    result = run_hook("claude-code", json.dumps(payload), store_location=str(store), on_pass="allow")
    decision = json.loads(result.stdout).get("hookSpecificOutput", {}).get("permissionDecision")
    failed = {check.name for d in result.decisions for check in d.report.gate if not check.passed}
    return decision, failed, list(result.decisions)


def test_a_push_to_main_in_a_master_repository_is_denied(tmp_path):
    repo = make_repo(tmp_path, default="master")
    git(repo, "branch", "main")  # the agent assumed main and made one
    decision, failed, _ = hook(repo, tmp_path / "s.db", "git push origin main")
    assert decision == "deny" and "invariant:push_names_the_real_default_branch" in failed
    git(repo, "checkout", "-q", "-b", "feature")
    _, failed, _ = hook(repo, tmp_path / "s.db", "git push -u origin feature")
    assert "invariant:push_names_the_real_default_branch" not in failed


def test_the_default_branch_comes_from_the_remote_head(tmp_path):
    # The remote's HEAD moved to trunk after the clone: the push to master is the stray one.
    repo = make_repo(tmp_path, default="master")
    git(repo, "push", "-q", "origin", "master:main")
    subprocess.run(["git", "--git-dir", str(tmp_path / "origin.git"), "symbolic-ref", "HEAD", "refs/heads/main"],
                   check=True)
    decision, failed, _ = hook(repo, tmp_path / "s.db", "git push origin master")
    assert decision == "deny" and "invariant:push_names_the_real_default_branch" in failed


def test_a_branch_that_tracks_main_does_not_push_into_main(tmp_path):
    repo = make_repo(tmp_path)
    git(repo, "checkout", "-q", "-b", "feature", "origin/main")  # tracks origin/main
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    for command in ("git -c push.default=upstream push", "git push origin HEAD:main", "git push origin feature:main"):
        decision, failed, _ = hook(repo, tmp_path / "s.db", command)
        assert decision == "deny", command
        assert "invariant:no_push_of_another_branch_into_default_branch" in failed, (command, failed)
    _, failed, _ = hook(repo, tmp_path / "s.db", "git push -u origin feature")
    assert "invariant:no_push_of_another_branch_into_default_branch" not in failed


def test_the_main_checkouts_git_directory_is_never_deleted(tmp_path):
    repo = make_repo(tmp_path)
    store = tmp_path / "s.db"
    decision, failed, _ = hook(repo, store, "rm -rf .git")
    assert decision == "deny" and "invariant:no_delete_of_git_common_dir" in failed
    (repo / "build").mkdir()
    decision, failed, _ = hook(repo, store, "rm -rf build")
    assert "invariant:no_delete_of_git_common_dir" not in failed
    # From a linked worktree the common directory is still the main checkout's .git.
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(worktree))
    _, failed, decisions = hook(worktree, store, "rm -rf build")
    assert "invariant:no_delete_of_git_common_dir" not in failed
    learned = {r.key: r.new_value for d in decisions for r in d.report.repairs}
    assert learned.get("git.common_dir") == str((repo / ".git").resolve())
    # The worktree's own .git is a file pointing there, not the history itself.
    _, failed, _ = hook(worktree, store, "rm -f .git")
    assert "invariant:no_delete_of_git_common_dir" not in failed


def test_a_branch_whose_pull_request_was_merged_is_not_pushed_again(tmp_path):
    repo = make_repo(tmp_path)
    store = tmp_path / "s.db"
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    git(repo, "push", "-q", "-u", "origin", "feature")
    _, failed, _ = hook(repo, store, "git push")
    assert "invariant:no_push_of_branch_whose_remote_was_deleted" not in failed
    # The host merges the pull request and deletes its branch; the agent fetches and goes on.
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "--git-dir", str(origin), "update-ref", "refs/heads/main", "refs/heads/feature"], check=True)
    subprocess.run(["git", "--git-dir", str(origin), "branch", "-q", "-D", "feature"], check=True)
    git(repo, "fetch", "-q", "--prune")
    (repo / "g.txt").write_text("g\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    for command in ("git push", "git push origin feature", "git push -u origin HEAD"):
        decision, failed, _ = hook(repo, tmp_path / f"fresh-{len(command)}.db", command)
        assert decision == "deny", command
        assert "invariant:no_push_of_branch_whose_remote_was_deleted" in failed, (command, failed)
