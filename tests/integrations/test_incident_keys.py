"""Real coding-agent incidents the built-in contract covers without an extension (issue 10
item 8): the default branch master vs main, an upstream that tracks the default branch, the
main checkout's .git seen from a worktree, a branch gone stale after its pull request was
merged, a stale view of the remote before a force push, a package.json script named by
out-of-date instructions, a migration against the wrong database, and project facts
recorded for one repository applied in another. Each through ``run_hook`` with Claude Code's PreToolUse JSON, on real repositories
with real bare remotes, an empty SQLite store, and the verifiers reading git read-only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from statewise.contract import builtin_contract
from statewise.integrations.hooks import run_hook
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

DEV = Provenance(source="developer", authority="developer", actor="dev")

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
    decision, failed, decisions = hook(repo, store, "rm -rf .git")
    # Since issue 25 the built-in self-protection (git's hooks and config, statewise.protection)
    # stops it before the guard runs; the invariant is the second line.
    assert decision == "deny" and ("invariant:no_delete_of_git_common_dir" in failed or not decisions)
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


def record(store: Path, key: str, value: object, scope: str) -> None:
    opened = SQLiteStore(str(store), key_schema=builtin_contract())
    try:
        opened.put(RecordDraft(key=key, value=value, scope=scope, provenance=DEV))
    finally:
        opened.close()


def test_a_force_push_from_a_stale_view_of_the_remote_is_denied(tmp_path):
    # Two clones of one origin on the same branch; the other one pushed, this one never fetched.
    repo = make_repo(tmp_path)
    store = tmp_path / "s.db"
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    git(repo, "push", "-q", "-u", "origin", "feature")
    scope = derive_task_scope(repo)
    record(store, "user.allow_force_push", True, f"user:{scope.user}")
    git(repo, "commit", "-q", "--amend", "-m", "f, reworded")  # the history this clone will force
    _, failed, _ = hook(repo, store, "git push --force origin feature")
    assert "invariant:no_force_push_over_unseen_commits" not in failed  # nobody else pushed yet
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", "-b", "feature", str(tmp_path / "origin.git"), str(other)], check=True)
    (other / "theirs.txt").write_text("t\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "a colleague's commit")
    git(other, "push", "-q", "origin", "feature")
    decision, failed, _ = hook(repo, tmp_path / "fresh.db", "git push --force origin feature")
    assert decision == "deny" and "invariant:no_force_push_over_unseen_commits" in failed, failed


def test_a_force_push_of_a_ref_the_origin_does_not_have_needs_no_force_permission(tmp_path):
    # A new release tag pushed with --force moves nothing: no question about
    # user.allow_force_push, which nobody recorded. The same push of a tag the origin has does.
    repo = make_repo(tmp_path)
    git(repo, "tag", "v1.0.0")
    git(repo, "push", "-q", "origin", "v1.0.0")
    git(repo, "tag", "v1.1.0")
    for command in ("git push --force origin refs/tags/v1.1.0", "git push -f origin v1.1.0"):  # a local tag
        decision, failed, _ = hook(repo, tmp_path / "s.db", command)
        assert decision == "allow", (command, failed)
    # A force push of a branch stays the developer's call even when the origin lacks it (the
    # developers' dangerous corpus, benchmarks/ordinary).
    git(repo, "checkout", "-q", "-b", "feature/new")
    for command in ("git push --force origin feature/new",
                    "git push --force origin refs/tags/v1.0.0", "git push -f origin v1.0.0"):
        decision, failed, _ = hook(repo, tmp_path / "s.db", command)
        assert decision == "ask" and "invariant:force_push_needs_developer_permission" in failed, (command, failed)
    # Another remote is not what the origin's refs say anything about: the question stays.
    git(repo, "remote", "add", "mirror", str(tmp_path / "origin.git"))
    decision, failed, _ = hook(repo, tmp_path / "s.db", "git push --force mirror refs/tags/v1.1.0")
    assert decision == "ask" and "invariant:force_push_needs_developer_permission" in failed, failed


def test_a_script_that_package_json_no_longer_has_is_denied(tmp_path):
    repo = make_repo(tmp_path)
    (repo / "package.json").write_text(json.dumps({"name": "app", "scripts": {"build": "tsc", "lint": "eslint ."}}))
    (repo / "AGENTS.md").write_text("Type-check with `npm run typecheck` before pushing.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "package.json")
    store = tmp_path / "s.db"
    for command in ("npm run typecheck", "pnpm run typecheck"):
        decision, failed, _ = hook(repo, store, command)
        assert decision == "deny" and "invariant:script_exists_in_package_json" in failed, (command, failed)
    # yarn and bun run binaries and files of that name too: not a script check
    for command in ("npm run build", "npm run lint -- --fix", "pnpm run build", "yarn run tsc", "bun run index.ts"):
        decision, failed, _ = hook(repo, store, command)
        assert decision == "allow", (command, failed)


def test_a_migration_runs_only_against_a_database_known_not_to_be_production(tmp_path):
    repo = make_repo(tmp_path)
    store = tmp_path / "s.db"
    # Nobody has said which database this checkout reaches: a question, never "it held".
    for command in ("alembic upgrade head", "pnpm prisma migrate reset", "python manage.py migrate"):
        decision, failed, _ = hook(repo, store, command)
        assert decision == "ask", (command, failed)
        assert "invariant:migration_targets_known_non_production_database" in failed
    # The command itself names production: denied whatever the record says.
    decision, failed, _ = hook(repo, store, "RAILS_ENV=production bin/rails db:migrate")
    assert decision == "deny" and "invariant:no_migration_named_for_production" in failed
    scope = derive_task_scope(repo)
    record(store, "database.environment", "development", f"workspace:{scope.workspace}")
    decision, failed, _ = hook(repo, store, "alembic upgrade head")
    assert decision == "allow", failed
    production = tmp_path / "prod.db"
    record(production, "database.environment", "production", f"workspace:{scope.workspace}")
    decision, failed, _ = hook(repo, production, "alembic upgrade head")
    assert decision == "deny" and "invariant:migration_targets_known_non_production_database" in failed


def test_project_facts_of_one_repository_are_not_applied_in_another(tmp_path):
    # One store for the developer's machine; the test command was recorded for repository A.
    a = make_repo(tmp_path / "a")
    b = make_repo(tmp_path / "b")
    store = tmp_path / "s.db"
    record(store, "project.test_command", "make check", f"repo:{derive_task_scope(a).repo}")
    assert derive_task_scope(a).repo != derive_task_scope(b).repo
    decision, failed, _ = hook(a, store, "pytest")
    assert decision == "deny" and "invariant:test_command_is_resolved_command" in failed
    decision, failed, _ = hook(b, store, "pytest")
    assert decision == "allow" and "invariant:test_command_is_resolved_command" not in failed


def test_a_test_path_that_was_moved_is_denied(tmp_path):
    repo = make_repo(tmp_path)
    (repo / "tests" / "unit").mkdir(parents=True)
    (repo / "tests" / "unit" / "test_api.py").write_text("def test_x():\n    assert True\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tests")
    store = tmp_path / "s.db"
    # The instructions still say tests/test_api.py; the file moved to tests/unit/.
    decision, failed, _ = hook(repo, store, "pytest tests/test_api.py -q")
    assert decision == "deny" and "invariant:test_paths_exist" in failed, failed
    for command in ("pytest tests/unit/test_api.py -q", "pytest -k api", "pytest tests/unit/test_api.py::test_x",
                    "python -m pytest tests", "pytest --timeout 30 tests/unit"):
        decision, failed, _ = hook(repo, store, command)
        assert "invariant:test_paths_exist" not in failed, (command, failed)
        assert decision == "allow", (command, failed)


def test_a_test_file_the_agent_just_wrote_is_seen_at_once(tmp_path):
    # The agent runs a test file that does not exist yet, is told so, writes it and runs it:
    # the second call sees the file (a path's existence is looked at every check, not kept
    # from the first call for minutes).
    repo = make_repo(tmp_path)
    (repo / "tests").mkdir()
    store = tmp_path / "s.db"
    decision, failed, _ = hook(repo, store, "pytest tests/test_new.py -q")
    assert decision == "deny" and "invariant:test_paths_exist" in failed, failed
    (repo / "tests" / "test_new.py").write_text("def test_x():\n    assert True\n")
    decision, failed, _ = hook(repo, store, "pytest tests/test_new.py -q")
    assert decision == "allow" and "invariant:test_paths_exist" not in failed, failed
    (repo / "tests" / "test_new.py").unlink()  # and gone again: denied again
    decision, failed, _ = hook(repo, store, "pytest tests/test_new.py -q")
    assert decision == "deny" and "invariant:test_paths_exist" in failed, failed


def test_an_untracked_directory_the_makefile_declares_as_build_dir_is_deleted_without_a_question(tmp_path):
    repo = make_repo(tmp_path)
    (repo / "bin").mkdir()
    (repo / "bin" / "tool").write_text("binary\n")
    store = tmp_path / "s.db"
    # No Makefile: nobody said bin is build output, a question (not a deny: the developer knows).
    decision, failed, _ = hook(repo, store, "rm -rf bin")
    assert decision == "ask" and "invariant:recursive_delete_needs_known_protection" in failed
    (repo / "Makefile").write_text("BUILD_DIR := bin/  # outputs\n\nbuild:\n\tgo build -o $(BUILD_DIR)/tool .\n")
    assert hook(repo, store, "rm -rf bin")[0] == "allow"
    assert hook(repo, store, "rm -rf bin/tool")[0] == "allow"
    # Only below the declared directory, only plain relative names, only untracked data.
    (repo / "data").mkdir()
    (repo / "data" / "x.csv").write_text("1\n")
    assert hook(repo, store, "rm -rf data")[0] == "ask"
    for declared in (".", "..", "/tmp", "$(OUT)", ".cache"):
        (repo / "Makefile").write_text(f"BUILD_DIR = {declared}\n")
        assert hook(repo, store, "rm -rf data")[0] == "ask", declared
    (repo / "Makefile").write_text("BUILD_DIR = bin\n")
    git(repo, "add", "bin")
    git(repo, "commit", "-q", "-m", "bin is tracked now")
    assert hook(repo, store, "rm -rf bin")[0] == "ask"


def test_the_workspaces_own_virtual_environment_is_deleted_without_a_question_tracked_or_not(tmp_path):
    # "Remove the virtual environment so it can be rebuilt": a venv is rebuilt from the project's
    # files, so its recursive delete needs no protection record, even when git tracks it (a
    # developer would not be asked which paths are protected for it). Which directory it is comes
    # from the python.venv verifier (a pyvenv.cfg below the workspace), never from a record alone.
    repo = make_repo(tmp_path)
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (repo / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    (repo / "env2").mkdir()
    (repo / "env2" / "lib.txt").write_text("not a venv\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "everything tracked, the venv too")
    store = tmp_path / "s.db"
    assert hook(repo, store, "rm -rf .venv")[0] == "allow"
    assert hook(repo, store, f"rm -rf -- {repo / '.venv'}")[0] == "allow"
    # Any other tracked directory is still a question: a venv-like name without pyvenv.cfg, the
    # sources, and the sources while an agent's record calls them the venv.
    for path in ("env2", "src"):
        decision, failed, _ = hook(repo, store, f"rm -rf {path}")
        assert decision == "ask" and "invariant:recursive_delete_needs_known_protection" in failed, path
    said = SQLiteStore(str(store), key_schema=builtin_contract())
    try:
        said.put(RecordDraft(key="python.venv_path", value=str(repo / "src"), scope=f"workspace:{repo}",
                             provenance=Provenance(source="agent_inference", authority="agent", actor="claude")),
                 replace=True)
    finally:
        said.close()
    assert hook(repo, store, "rm -rf src")[0] == "ask"
