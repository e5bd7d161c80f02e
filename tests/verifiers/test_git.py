"""Git adapters on real repositories with a real bare origin."""

from __future__ import annotations

from pathlib import Path

from statewise.verifiers import ObservationStatus
from tests.verifiers.helpers import Repo, commit, git, observe

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE


def test_current_branch_is_the_checked_out_branch(repo: Repo):
    seen = observe("git.current_branch", repo.work, value_type="string")
    assert seen.status is OBSERVED
    assert seen.value == "main"
    assert "symbolic-ref" in seen.reference
    git(repo.work, "switch", "-q", "feature")
    assert observe("git.current_branch", repo.work, value_type="string").value == "feature"


def test_current_branch_on_detached_head_is_absent(repo: Repo):
    git(repo.work, "switch", "-q", "--detach", "HEAD")
    seen = observe("git.current_branch", repo.work, value_type="string")
    assert seen.status is ABSENT
    assert "detached" in seen.detail


def test_git_adapters_outside_a_repository_are_unavailable(tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".git").write_text("not a repository", encoding="utf-8")  # stop git walking up
    for adapter, value_type in [
        ("git.current_branch", "string"),
        ("git.remotes", "list"),
        ("git.clean_tree", "bool"),
    ]:
        seen = observe(adapter, plain, value_type=value_type)
        assert seen.status is UNAVAILABLE, adapter
        assert seen.value is None


def test_missing_workspace_is_unavailable(tmp_path: Path):
    seen = observe("git.current_branch", tmp_path / "nowhere", value_type="string")
    assert seen.status is UNAVAILABLE
    assert "does not exist" in seen.detail


def test_default_branch_asks_a_local_remote_directly(repo: Repo):
    seen = observe("git.default_branch", repo.work, value_type="string", args={"remote": "origin"})
    assert seen.status is OBSERVED
    assert seen.value == "main"
    assert "ls-remote" in seen.reference
    # The remote's HEAD moves; the working tree's cached refs/remotes/origin/HEAD is not consulted.
    git(repo.work, "push", "-q", "origin", "main:develop")
    git(repo.origin, "symbolic-ref", "HEAD", "refs/heads/develop")
    assert observe("git.default_branch", repo.work, value_type="string").value == "develop"


def test_default_branch_of_an_empty_remote_is_absent_and_of_no_remote_unavailable(tmp_path: Path):
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "a.txt", "a")
    seen = observe("git.default_branch", work, value_type="string")
    assert seen.status is UNAVAILABLE
    assert "no remote named origin" in seen.detail
    git(work, "remote", "add", "origin", str(empty))
    assert observe("git.default_branch", work, value_type="string").status is ABSENT


def test_default_branch_of_a_hosted_remote_reads_origin_head(repo: Repo):
    # A hosted URL is never contacted when refs/remotes/origin/HEAD is known.
    git(repo.work, "remote", "set-head", "origin", "main")
    git(repo.work, "remote", "set-url", "origin", "https://git.example.invalid/acme/app.git")
    seen = observe("git.default_branch", repo.work, value_type="string")
    assert seen.status is OBSERVED
    assert seen.value == "main"
    assert "not contacted" in seen.detail


def test_branch_exists(repo: Repo):
    assert observe("git.branch_exists", repo.work, value_type="bool", args={"branch": "feature"}).value is True
    missing = observe("git.branch_exists", repo.work, value_type="bool", args={"branch": "nope"})
    assert missing.status is OBSERVED
    assert missing.value is False


def test_branch_names_that_look_like_options_never_reach_git(repo: Repo):
    marker = repo.root / "pwned"
    for adapter in ("git.branch_exists", "git.upstream", "git.branch_protection"):
        seen = observe(
            adapter,
            repo.work,
            value_type="bool",
            args={"branch": f"--upload-pack=touch {marker}"},
        )
        assert seen.status is UNAVAILABLE, adapter
        assert "not a valid branch name" in seen.detail
    seen = observe("git.remote_url", repo.work, value_type="string", args={"remote": "--upload-pack=x"})
    assert seen.status is UNAVAILABLE
    assert not marker.exists()


def test_upstream(repo: Repo):
    seen = observe("git.upstream", repo.work, value_type="string", args={"branch": "feature"})
    assert seen.status is OBSERVED
    assert seen.value == "origin/feature"
    # Without a branch argument: the current branch.
    assert observe("git.upstream", repo.work, value_type="string").value == "origin/main"
    git(repo.work, "branch", "-q", "local-only")
    assert observe("git.upstream", repo.work, value_type="string", args={"branch": "local-only"}).status is ABSENT
    gone = observe("git.upstream", repo.work, value_type="string", args={"branch": "no-such-branch"})
    assert gone.status is ABSENT
    assert "no local branch" in gone.detail


def test_remote_url_and_remotes(repo: Repo):
    seen = observe("git.remote_url", repo.work, value_type="string", args={"remote": "origin"})
    assert seen.status is OBSERVED
    assert seen.value == str(repo.origin)
    assert observe("git.remote_url", repo.work, value_type="string", args={"remote": "upstream"}).status is ABSENT
    assert observe("git.remotes", repo.work, value_type="list").value == ["origin"]
    git(repo.work, "remote", "add", "upstream", "https://example.invalid/x.git")
    assert observe("git.remotes", repo.work, value_type="list").value == ["origin", "upstream"]


def test_clean_tree_sees_untracked_unstaged_and_staged_changes(repo: Repo):
    assert observe("git.clean_tree", repo.work, value_type="bool").value is True
    (repo.work / "new.txt").write_text("x", encoding="utf-8")
    dirty = observe("git.clean_tree", repo.work, value_type="bool")
    assert dirty.value is False
    assert "new.txt" in dirty.detail
    (repo.work / "new.txt").unlink()
    (repo.work / "README.md").write_text("changed\n", encoding="utf-8")
    assert observe("git.clean_tree", repo.work, value_type="bool").value is False
    git(repo.work, "add", "README.md")
    assert observe("git.clean_tree", repo.work, value_type="bool").value is False
    git(repo.work, "commit", "-q", "-m", "c")
    (repo.work / "ignored.log").write_text("x", encoding="utf-8")
    (repo.work / ".git" / "info" / "exclude").write_text("*.log\n", encoding="utf-8")
    assert observe("git.clean_tree", repo.work, value_type="bool").value is True


def test_clean_tree_does_not_rewrite_the_index(repo: Repo):
    index = repo.work / ".git" / "index"
    # Make the index stat data stale, which a plain `git status` would refresh and write back.
    (repo.work / "README.md").write_text("hello\n", encoding="utf-8")
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert observe("git.clean_tree", repo.work, value_type="bool").value is True
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    # Control: a plain `git status` (optional locks allowed) does rewrite it here.
    git(repo.work, "status", "--porcelain")
    assert (index.read_bytes(), index.stat().st_mtime_ns) != before


def test_ahead_behind(repo: Repo):
    git(repo.work, "switch", "-q", "feature")
    assert observe("git.ahead_behind", repo.work, value_type="int").value == 0
    commit(repo.work, "a.txt", "1")
    commit(repo.work, "b.txt", "2")
    ahead = observe("git.ahead_behind", repo.work, value_type="int")
    assert ahead.status is OBSERVED
    assert ahead.value == 2
    assert "2 ahead of and 0 behind origin/feature" in ahead.detail
    behind = observe("git.ahead_behind", repo.work, value_type="int", args={"branch": "main", "upstream": "feature"})
    assert behind.value == 0
    assert (
        observe(
            "git.ahead_behind",
            repo.work,
            value_type="int",
            args={"branch": "main", "upstream": "feature", "field": "behind"},
        ).value
        == 3
    )
    git(repo.work, "branch", "-q", "lonely")
    assert observe("git.ahead_behind", repo.work, value_type="int", args={"branch": "lonely"}).status is ABSENT
    bad = observe("git.ahead_behind", repo.work, value_type="int", args={"field": "sideways"})
    assert bad.status is UNAVAILABLE
