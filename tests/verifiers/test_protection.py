"""Branch protection as the remote enforces it: the shipped hook on a real bare origin, and the
GitHub-compatible REST adapter against a real loopback HTTP server."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from statewise.verifiers import ObservationStatus, install_branch_protection
from statewise.verifiers.protection import HOOK_MARKER, hook_source, is_local_url
from tests.verifiers.helpers import Repo, commit, git, make_repo, observe, private_env

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE


def push(repo: Repo, *args: str):
    return git(repo.work, "push", "origin", *args, check=False)


def remote_sha(repo: Repo, branch: str) -> str:
    return git(repo.origin, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False).stdout.strip()


@pytest.fixture
def protected(repo: Repo) -> Repo:
    hook = install_branch_protection(repo.origin, ["main", "release/*"])
    assert hook == repo.origin / "hooks" / "pre-receive"
    assert os.access(hook, os.X_OK)
    return repo


# --- the hook really enforces protection ---------------------------------------------------------


def test_hook_rejects_a_direct_push_to_a_protected_branch(protected: Repo):
    before = remote_sha(protected, "main")
    commit(protected.work, "direct.txt", "x")
    done = push(protected, "main")
    assert done.returncode != 0
    assert "statewise: refusing direct push to protected branch 'main'" in done.stderr
    assert remote_sha(protected, "main") == before


def test_hook_rejects_a_force_push_to_a_protected_branch(protected: Repo):
    before = remote_sha(protected, "main")
    git(protected.work, "commit", "-q", "--amend", "-m", "rewritten history")
    done = push(protected, "--force", "main")
    assert done.returncode != 0
    assert "force push (non-fast-forward) to protected branch 'main'" in done.stderr
    assert remote_sha(protected, "main") == before


def test_hook_rejects_deleting_or_creating_a_protected_branch(protected: Repo):
    done = push(protected, "--delete", "main")
    assert done.returncode != 0
    assert "deletion of protected branch 'main'" in done.stderr
    assert remote_sha(protected, "main")
    created = push(protected, "main:release/2.0")
    assert created.returncode != 0
    assert "creation of protected branch 'release/2.0'" in created.stderr
    assert "matches statewise.protectedBranch 'release/*'" in created.stderr
    assert remote_sha(protected, "release/2.0") == ""


def test_hook_lets_feature_branches_through_including_force_and_delete(protected: Repo):
    git(protected.work, "switch", "-q", "feature")
    commit(protected.work, "more.txt", "more")
    assert push(protected, "feature").returncode == 0
    git(protected.work, "commit", "-q", "--amend", "-m", "amended")
    assert push(protected, "--force", "feature").returncode == 0
    assert remote_sha(protected, "feature") == git(protected.work, "rev-parse", "HEAD").stdout.strip()
    assert push(protected, "--delete", "feature").returncode == 0
    assert remote_sha(protected, "feature") == ""


def test_hook_also_works_as_an_update_hook(repo: Repo):
    git(repo.origin, "config", "--add", "statewise.protectedBranch", "main")
    update = repo.origin / "hooks" / "update"
    update.write_text(hook_source(), encoding="utf-8")
    update.chmod(0o755)
    commit(repo.work, "x.txt", "x")
    done = push(repo, "main")
    assert done.returncode != 0
    assert "refusing direct push to protected branch 'main'" in done.stderr
    assert observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"}).value is True


def test_install_replaces_patterns_and_keeps_foreign_hooks(repo: Repo):
    install_branch_protection(repo.origin, ["main"])
    install_branch_protection(repo.origin, ["trunk", "rel-*"])
    values = git(repo.origin, "config", "--get-all", "statewise.protectedBranch").stdout.split()
    assert values == ["trunk", "rel-*"]
    assert HOOK_MARKER in (repo.origin / "hooks" / "pre-receive").read_text(encoding="utf-8")
    other = make_repo(repo.root / "other")
    (other.origin / "hooks" / "pre-receive").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        install_branch_protection(other.origin, ["main"])
    with pytest.raises(ValueError):
        install_branch_protection(repo.origin, ["bad\nname"])


# --- the local verifier ---------------------------------------------------------------------------


def test_branch_protection_reads_the_local_remote(protected: Repo):
    seen = observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "main"})
    assert seen.status is OBSERVED
    assert seen.value is True
    assert "pre-receive" in seen.detail
    assert "receive.denyNonFastForwards=unset" in seen.detail
    release = observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "release/1.4"})
    assert release.value is True
    feature = observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "feature"})
    assert feature.status is OBSERVED
    assert feature.value is False
    # Without a branch argument: the current branch.
    assert observe("git.branch_protection", protected.work, value_type="bool").value is True


def test_branch_protection_reports_receive_settings(protected: Repo):
    git(protected.origin, "config", "receive.denyNonFastForwards", "true")
    git(protected.origin, "config", "receive.denyDeletes", "false")
    seen = observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "feature"})
    assert "receive.denyNonFastForwards=true, receive.denyDeletes=false" in seen.detail


def test_config_without_an_enforcing_hook_protects_nothing(repo: Repo):
    git(repo.origin, "config", "--add", "statewise.protectedBranch", "main")
    seen = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert seen.status is OBSERVED
    assert seen.value is False
    assert "nothing enforces it" in seen.detail
    assert observe("git.protected_branches", repo.work, value_type="list").value == []
    # A hook that is not executable is not run by git, so it protects nothing either.
    hook = install_branch_protection(repo.origin, ["main"])
    hook.chmod(0o644)
    seen = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert seen.value is False
    assert "not executable" in seen.detail
    commit(repo.work, "x.txt", "x")
    assert push(repo, "main").returncode == 0  # and indeed git lets the push through


def test_protected_branches_lists_enforced_patterns(protected: Repo):
    seen = observe("git.protected_branches", protected.work, value_type="list", args={"remote": "origin"})
    assert seen.status is OBSERVED
    assert seen.value == ["main", "release/*"]


def test_file_url_and_relative_path_remotes_are_read_directly(protected: Repo):
    git(protected.work, "remote", "set-url", "origin", protected.origin.as_uri())
    assert observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "main"}).value is True
    git(protected.work, "remote", "set-url", "origin", "../origin.git")
    assert observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "main"}).value is True


def test_missing_remote_repository_is_unavailable(repo: Repo):
    git(repo.work, "remote", "set-url", "origin", str(repo.root / "gone.git"))
    seen = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert seen.status is UNAVAILABLE
    assert "not a git repository" in seen.detail
    git(repo.work, "remote", "remove", "origin")
    assert observe("git.protected_branches", repo.work, value_type="list").status is UNAVAILABLE


def test_url_classification():
    assert is_local_url("/srv/git/app.git")
    assert is_local_url("../app.git")
    assert is_local_url("file:///srv/git/app.git")
    assert not is_local_url("https://github.com/acme/app.git")
    assert not is_local_url("git@github.com:acme/app.git")
    assert not is_local_url("ssh://git@github.com/acme/app.git")


# --- the GitHub-compatible REST adapter against a real loopback server ------------------------------


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        server: Any = self.server
        server.seen.append((self.path, self.headers.get("Authorization")))
        status, body = server.routes.get(self.path, (404, {"message": "Not Found"}))
        if status == "slow":
            time.sleep(body)
            status, body = 200, {}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@contextmanager
def api(routes: dict[str, tuple[Any, Any]]) -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.routes = routes
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        server.url = f"http://127.0.0.1:{server.server_address[1]}"
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def hosted(tmp_path: Path) -> Path:
    work = tmp_path / "hosted"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "a.txt", "a")
    git(work, "remote", "add", "origin", "git@github.com:acme/app.git")
    return work


BASE = "/repos/acme/app"


def test_github_protection_200_is_protected_and_sends_the_token(hosted: Path):
    with api({f"{BASE}/branches/main/protection": (200, {"url": "x"})}) as server:
        env = private_env(STATEWISE_GITHUB_API_URL=server.url, GITHUB_TOKEN="t0ken")
        seen = observe("git.branch_protection", hosted, value_type="bool", args={"branch": "main"}, env=env)
    assert seen.status is OBSERVED
    assert seen.value is True
    assert seen.reference == f"{server.url}{BASE}/branches/main/protection"
    assert server.seen == [(f"{BASE}/branches/main/protection", "Bearer t0ken")]


def test_github_branch_not_protected_is_false_and_names_are_escaped(hosted: Path):
    routes = {f"{BASE}/branches/release%2F1.0/protection": (404, {"message": "Branch not protected"})}
    with api(routes) as server:
        env = private_env(STATEWISE_GITHUB_API_URL=server.url)
        env.pop("GITHUB_TOKEN", None)
        seen = observe("git.branch_protection", hosted, value_type="bool", args={"branch": "release/1.0"}, env=env)
    assert seen.status is OBSERVED
    assert seen.value is False
    assert server.seen == [(f"{BASE}/branches/release%2F1.0/protection", None)]


def test_github_bare_404_falls_back_to_the_branch_endpoint(hosted: Path):
    # GitHub answers a bare 404 when the token may not read protection settings: that is not
    # "unprotected". The branch endpoint's protected field decides instead.
    routes = {
        f"{BASE}/branches/main/protection": (404, {"message": "Not Found"}),
        f"{BASE}/branches/main": (200, {"name": "main", "protected": True}),
    }
    with api(routes) as server:
        seen = observe(
            "git.branch_protection",
            hosted,
            value_type="bool",
            args={"branch": "main", "api_url": server.url},
        )
    assert seen.status is OBSERVED
    assert seen.value is True
    with api({}) as server:
        nothing = observe(
            "git.branch_protection",
            hosted,
            value_type="bool",
            args={"branch": "main", "api_url": server.url},
        )
    assert nothing.status is UNAVAILABLE


def test_github_errors_and_timeouts_are_unavailable(hosted: Path):
    with api({f"{BASE}/branches/main/protection": (500, {"message": "boom"})}) as server:
        env = private_env(STATEWISE_GITHUB_API_URL=server.url)
        broken = observe("git.branch_protection", hosted, value_type="bool", args={"branch": "main"}, env=env)
    assert broken.status is UNAVAILABLE
    assert "500" in broken.detail
    with api({f"{BASE}/branches/main/protection": ("slow", 3)}) as server:
        env = private_env(STATEWISE_GITHUB_API_URL=server.url)
        started = time.monotonic()
        slow = observe(
            "git.branch_protection", hosted, value_type="bool", args={"branch": "main"}, env=env, timeout=0.5
        )
        assert time.monotonic() - started < 2.5
    assert slow.status is UNAVAILABLE


def test_github_protected_branches_reads_every_page(hosted: Path):
    first = [{"name": f"release/{i}", "protected": True} for i in range(100)]
    routes = {
        f"{BASE}/branches?protected=true&per_page=100&page=1": (200, first),
        f"{BASE}/branches?protected=true&per_page=100&page=2": (200, [{"name": "main", "protected": True}]),
    }
    with api(routes) as server:
        env = private_env(STATEWISE_GITHUB_API_URL=server.url)
        seen = observe("git.protected_branches", hosted, value_type="list", env=env)
    assert seen.status is OBSERVED
    assert len(seen.value) == 101
    assert seen.value[-1] == "main"


def test_unknown_host_without_api_url_is_unavailable(hosted: Path):
    git(hosted, "remote", "set-url", "origin", "https://git.example.invalid/acme/app.git")
    env = private_env()
    env.pop("STATEWISE_GITHUB_API_URL", None)
    seen = observe("git.branch_protection", hosted, value_type="bool", args={"branch": "main"}, env=env)
    assert seen.status is UNAVAILABLE
    assert "no protection API is known for host git.example.invalid" in seen.detail
