"""Branch protection as the remote enforces it: the shipped hook and foreign hooks on a real bare
origin, and the GitHub and GitLab APIs answered by a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from statewise.verifiers import ObservationStatus, install_branch_protection
from statewise.verifiers.git import is_local_url
from statewise.verifiers.local_protection import ConfigGarbage, parse_config_list
from statewise.verifiers.protection import HOOK_MARKER, gitlab_wildcard_match, hook_source
from tests.verifiers.fake_hosts import (
    api_server,
    dead_port,
    github_bad_credentials,
    github_branch,
    github_not_found,
    github_not_protected,
    github_protection,
    github_rule,
    gitlab_protected,
    silent_server,
)
from tests.verifiers.helpers import Repo, commit, git, make_repo, observe, private_env, shim

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


# --- what a local remote's hooks say, and what they do not -----------------------------------------

GH006_HOOK = """#!/bin/sh
# A server-side hook written by the remote's owner, imitating GitHub.
while read old new ref; do
    if [ "$ref" = refs/heads/main ]; then
        echo "remote: error: GH006: Protected branch update failed for refs/heads/main." >&2
        echo "remote: error: Changes must be made through a pull request." >&2
        exit 1
    fi
done
exit 0
"""


def foreign_hook(repo: Repo, text: str = GH006_HOOK, name: str = "pre-receive") -> Path:
    hook = repo.origin / "hooks" / name
    hook.write_text(text, encoding="utf-8")
    hook.chmod(0o755)
    return hook


def test_a_foreign_server_hook_makes_protection_unknown(repo: Repo):
    hook = foreign_hook(repo)
    seen = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert seen.status is UNAVAILABLE
    assert "a server hook exists" in seen.detail and "protection not known" in seen.detail
    assert str(hook) in seen.detail
    # Also for a branch the hook happens to let through: the verifier cannot know that.
    assert observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "feature"}).status \
        is UNAVAILABLE
    assert observe("git.protected_branches", repo.work, value_type="list").status is UNAVAILABLE
    commit(repo.work, "x.txt", "x")
    assert "GH006" in push(repo, "main").stderr  # and the hook really refuses


def test_other_refusing_hooks_count_too(repo: Repo):
    foreign_hook(repo, "#!/bin/sh\nexit 0\n", name="reference-transaction")
    assert observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"}).status \
        is UNAVAILABLE
    # A post-receive hook cannot refuse anything: it does not make protection unknown.
    (repo.origin / "hooks" / "reference-transaction").unlink()
    foreign_hook(repo, "#!/bin/sh\nexit 0\n", name="post-receive")
    seen = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert seen.status is OBSERVED and seen.value is False
    assert "no server hook refuses pushes" in seen.detail


def test_a_hook_that_declares_what_it_protects_is_observed(repo: Repo):
    foreign_hook(repo, "#!/bin/sh\n# statewise-protects: main release/*\n" + GH006_HOOK.split("\n", 1)[1])
    main = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert main.status is OBSERVED and main.value is True and "declares" in main.detail
    feature = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "feature"})
    assert feature.status is OBSERVED and feature.value is False
    assert observe("git.protected_branches", repo.work, value_type="list").value == ["main", "release/*"]
    foreign_hook(repo, "#!/bin/sh\n# statewise-protects: none\nexit 0\n")
    assert observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"}).value is False


def test_statewise_hook_protects_its_branches_even_next_to_a_foreign_one(protected: Repo):
    foreign_hook(protected, "#!/bin/sh\nexit 0\n", name="update")
    main = observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "main"})
    assert main.status is OBSERVED and main.value is True
    feature = observe("git.branch_protection", protected.work, value_type="bool", args={"branch": "feature"})
    assert feature.status is UNAVAILABLE and "protection not known" in feature.detail


def test_an_unreadable_hook_is_not_taken_for_no_hook(repo: Repo):
    hook = repo.origin / "hooks" / "pre-receive"
    hook.mkdir(parents=True)  # git would try to run it; it is not a file StateWise can read
    seen = observe("git.branch_protection", repo.work, value_type="bool", args={"branch": "main"})
    assert seen.status is UNAVAILABLE and "not a regular file" in seen.detail


# --- garbage is never a value (issue 11, defect 7) ---------------------------------------------------


def garbage_git(directory: Path, payload: bytes) -> Path:
    """A git on the agent's PATH that prints ``payload`` for `config --null --list`, else real git."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "payload").write_bytes(payload)
    return shim(directory, "git", f"""for arg in "$@"; do
  if [ "$arg" = --list ]; then cat "{directory / 'payload'}"; exit 0; fi
done
exec "{real}" "$@\"""")


@pytest.mark.parametrize(
    "payload",
    [
        os.urandom(4096),
        b"",
        b"core.bare\ntrue",  # no final NUL
        b"\xff\xfe\x00",
        b"this is not a config listing\x00",
        b"core.repositoryformatversion\n0\x00statewise.protectedbranch\n\xffmain\x00",
    ],
    ids=["random", "empty", "unterminated", "undecodable", "not-a-key", "undecodable-value"],
)
def test_garbage_from_git_config_is_unavailable(repo: Repo, tmp_path: Path, payload: bytes):
    garbage_git(tmp_path / "bin", payload)
    env = private_env(tmp_path / "bin")
    for adapter, value_type in (("git.branch_protection", "bool"), ("git.protected_branches", "list")):
        seen = observe(adapter, repo.work, value_type=value_type, args={"branch": "main"} if value_type == "bool"
                       else {}, env=env)
        assert seen.status is UNAVAILABLE, (adapter, seen.detail)
        assert "cannot read the configuration" in seen.detail


def test_config_parser_reads_real_listings(repo: Repo):
    install_branch_protection(repo.origin, ["main", "release/*"])
    raw = subprocess.run(["git", f"--git-dir={repo.origin}", "config", "--null", "--list"],
                         capture_output=True, check=True).stdout
    entries = parse_config_list(raw)
    assert ("statewise.protectedbranch", "main") in entries and ("core.bare", "true") in entries
    assert parse_config_list(b"core.bare\x00") == [("core.bare", None)]
    assert parse_config_list(b'remote.my "odd" name.url\n/x\x00') == [('remote.my "odd" name.url', "/x")]
    with pytest.raises(ConfigGarbage):
        parse_config_list(b"\x00")


# --- GitHub: classic protection, rulesets, the branch's own field -------------------------------------


@pytest.fixture
def hosted(tmp_path: Path) -> Path:
    work = tmp_path / "hosted"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "a.txt", "a")
    git(work, "remote", "add", "origin", "git@github.com:acme/app.git")
    return work


BASE = "/repos/acme/app"
RULES = "?per_page=100&page=1"


def api_env(**extra: str) -> dict[str, str]:
    env = private_env()
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN", "GL_TOKEN", "STATEWISE_GITHUB_API_URL",
                 "STATEWISE_GITLAB_API_URL", "STATEWISE_API_NEGATIVE_TTL"):
        env.pop(name, None)
    env.update(extra)
    return env


def protection(work: Path, env: dict[str, str], branch: str = "main", timeout: float = 10, **args: Any):
    return observe("git.branch_protection", work, value_type="bool",
                   args={"branch": branch, "use_gh": False, **args}, env=env, timeout=timeout)


def test_github_classic_protection_is_protected_and_sends_the_token(hosted: Path):
    with api_server({f"{BASE}/branches/main/protection": github_protection("acme/app", "main")}) as server:
        seen = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url, GITHUB_TOKEN="t0ken"))
    assert seen.status is OBSERVED and seen.value is True
    assert seen.reference == f"{server.url}{BASE}/branches/main/protection"
    assert [(path, headers.get("Authorization")) for path, headers in server.seen] == \
        [(f"{BASE}/branches/main/protection", "Bearer t0ken")]
    assert "t0ken" not in seen.detail and "GITHUB_TOKEN" in seen.detail


def test_gh_token_wins_over_github_token(hosted: Path):
    with api_server({f"{BASE}/branches/main/protection": github_protection("acme/app", "main")}) as server:
        protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url, GH_TOKEN="first", GITHUB_TOKEN="second"))
    assert server.seen[0][1]["Authorization"] == "Bearer first"


def test_the_token_from_gh_auth_token(hosted: Path, tmp_path: Path):
    shim(tmp_path / "bin", "gh", 'echo "$@" > "$(dirname "$0")/args"; echo gho_fromgh')
    with api_server({f"{BASE}/branches/main/protection": github_protection("acme/app", "main")}) as server:
        seen = observe("git.branch_protection", hosted, value_type="bool", args={"branch": "main"},
                       env=api_env(STATEWISE_GITHUB_API_URL=server.url, PATH=f"{tmp_path / 'bin'}:{os.defpath}"))
    assert seen.value is True and "gh auth token" in seen.detail
    assert server.seen[0][1]["Authorization"] == "Bearer gho_fromgh"
    assert (tmp_path / "bin" / "args").read_text().split() == ["auth", "token", "--hostname", "github.com"]


def test_a_ruleset_protects_a_branch_classic_protection_does_not_know(hosted: Path):
    # GitHub answers "Branch not protected" for a branch protected only by a ruleset.
    routes = {
        f"{BASE}/branches/main/protection": github_not_protected(),
        f"{BASE}/rules/branches/main{RULES}": (200, [github_rule("pull_request"), github_rule("non_fast_forward")]),
    }
    with api_server(routes) as server:
        seen = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url))
    assert seen.status is OBSERVED and seen.value is True
    assert "non_fast_forward, pull_request" in seen.detail


def test_not_protected_only_when_classic_and_rulesets_both_say_so(hosted: Path):
    routes = {
        f"{BASE}/branches/release%2F1.0/protection": github_not_protected(),
        f"{BASE}/rules/branches/release%2F1.0{RULES}": (200, [github_rule("commit_message_pattern")]),
    }
    with api_server(routes) as server:
        seen = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url), branch="release/1.0")
        assert seen.status is OBSERVED and seen.value is False
        assert "non-protective" in seen.detail and "commit_message_pattern" in seen.detail
        # The rulesets endpoint failing leaves it unknown, even though classic protection said no.
        routes[f"{BASE}/rules/branches/release%2F1.0{RULES}"] = (500, {"message": "Server Error"})
        broken = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url), branch="release/1.0")
    assert broken.status is UNAVAILABLE


def test_a_token_without_admin_rights_falls_back_to_the_branch_field(hosted: Path):
    routes = {
        f"{BASE}/branches/main/protection": github_not_found(),  # what GitHub says to a non-admin token
        f"{BASE}/rules/branches/main{RULES}": (200, []),
        f"{BASE}/branches/main": github_branch("main", True),
        f"{BASE}/branches/dev/protection": (403, {"message": "Resource not accessible by integration"}),
        f"{BASE}/rules/branches/dev{RULES}": (200, []),
        f"{BASE}/branches/dev": github_branch("dev", False),
    }
    with api_server(routes) as server:
        main = protection(hosted, api_env(), api_url=server.url)
        dev = protection(hosted, api_env(), branch="dev", api_url=server.url)
        nothing = protection(hosted, api_env(), branch="gone", api_url=server.url)
    assert main.status is OBSERVED and main.value is True
    assert dev.status is OBSERVED and dev.value is False
    assert nothing.status is UNAVAILABLE and "protection not known" in nothing.detail


def test_garbage_from_the_api_is_unavailable(hosted: Path):
    routes = {
        f"{BASE}/branches/main/protection": (200, os.urandom(64) + b"\xff"),
        f"{BASE}/branches/dev/protection": github_not_protected(),
        f"{BASE}/rules/branches/dev{RULES}": (200, {"not": "a list"}),
    }
    with api_server(routes) as server:
        assert protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url)).status is UNAVAILABLE
        assert protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url), branch="dev").status is UNAVAILABLE


def test_github_protected_branches_reads_every_page(hosted: Path):
    first = [{"name": f"release/{i}", "protected": True} for i in range(100)]
    routes = {
        f"{BASE}/branches?protected=true&per_page=100&page=1": (200, first),
        f"{BASE}/branches?protected=true&per_page=100&page=2": (200, [{"name": "main", "protected": True}]),
    }
    with api_server(routes) as server:
        seen = observe("git.protected_branches", hosted, value_type="list", args={"use_gh": False},
                       env=api_env(STATEWISE_GITHUB_API_URL=server.url))
    assert seen.status is OBSERVED and len(seen.value) == 101 and seen.value[-1] == "main"


def test_unknown_host_without_api_url_is_unavailable(hosted: Path):
    git(hosted, "remote", "set-url", "origin", "https://git.example.invalid/acme/app.git")
    seen = protection(hosted, api_env())
    assert seen.status is UNAVAILABLE
    assert "no protection API is known for host git.example.invalid" in seen.detail


def test_plain_http_is_refused_off_loopback(hosted: Path):
    seen = protection(hosted, api_env(STATEWISE_GITHUB_API_URL="http://api.example.invalid", GH_TOKEN="secret"))
    assert seen.status is UNAVAILABLE and "only accepted for a loopback address" in seen.detail


# --- GitLab ------------------------------------------------------------------------------------


@pytest.fixture
def gitlab(tmp_path: Path) -> Path:
    work = tmp_path / "gl"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "a.txt", "a")
    git(work, "remote", "add", "origin", "https://oauth2:secret@gitlab.com/acme/platform/app.git")
    return work


GL = "/projects/acme%2Fplatform%2Fapp/protected_branches?per_page=100&page=1"


def test_gitlab_protected_branches_and_wildcards(gitlab: Path):
    routes = {GL: (200, [gitlab_protected("main"), gitlab_protected("release/*", push=0, inherited=True)])}
    with api_server(routes) as server:
        env = api_env(STATEWISE_GITLAB_API_URL=server.url, GITLAB_TOKEN="glpat-x")
        main = protection(gitlab, env)
        release = protection(gitlab, env, branch="release/2.1")
        feature = protection(gitlab, env, branch="feature/x")
        names = observe("git.protected_branches", gitlab, value_type="list", env=env)
    assert main.status is OBSERVED and main.value is True and "Maintainers" in main.detail
    assert release.value is True and "inherited" in release.detail
    assert feature.status is OBSERVED and feature.value is False
    assert names.value == ["main", "release/*"]
    assert {headers.get("Private-Token") for _, headers in server.seen} == {"glpat-x"}


def test_gitlab_without_access_is_unavailable(gitlab: Path):
    with api_server({GL: (401, {"message": "401 Unauthorized"})}) as server:
        denied = protection(gitlab, api_env(STATEWISE_GITLAB_API_URL=server.url))
    assert denied.status is UNAVAILABLE and "401" in denied.detail
    with api_server({}) as server:  # 404 Project Not Found: not "no protected branch"
        missing = protection(gitlab, api_env(STATEWISE_GITLAB_API_URL=server.url))
    assert missing.status is UNAVAILABLE and "404 Project Not Found" in missing.detail


def test_gitlab_wildcards():
    assert gitlab_wildcard_match("release/1.0", "release/*")
    assert gitlab_wildcard_match("main", "main") and not gitlab_wildcard_match("mainline", "main")
    assert gitlab_wildcard_match("a.b", "a.b") and not gitlab_wildcard_match("axb", "a.b")


# --- timeouts and the negative cache (issue 11, defect 2) -------------------------------------------


def test_a_hanging_api_costs_one_short_timeout_then_answers_at_once(hosted: Path):
    with silent_server() as url:
        env = api_env(STATEWISE_GITHUB_API_URL=url)
        started = time.monotonic()
        first = protection(hosted, env, timeout=20)
        first_took = time.monotonic() - started
        started = time.monotonic()
        again = [protection(hosted, env, timeout=20) for _ in range(3)]
        listed = observe("git.protected_branches", hosted, value_type="list", args={"use_gh": False}, env=env,
                         timeout=20)
        again_took = time.monotonic() - started
    assert first.status is UNAVAILABLE and "did not answer within 3s" in first.detail
    assert 2.5 < first_took < 5
    assert all(seen.status is UNAVAILABLE and "cached" in seen.detail for seen in again)
    assert listed.status is UNAVAILABLE and "cached" in listed.detail
    assert again_took < 1.5


def test_api_timeout_is_configurable_and_bounded_by_the_budget(hosted: Path):
    with silent_server() as url:
        env = api_env(STATEWISE_GITHUB_API_URL=url)
        started = time.monotonic()
        seen = protection(hosted, env, timeout=20, api_timeout=0.5)
        assert time.monotonic() - started < 1.5
        assert seen.status is UNAVAILABLE
        from statewise.verifiers.protection import NEGATIVE_CACHE
        NEGATIVE_CACHE.clear()
        started = time.monotonic()
        budget = protection(hosted, env, timeout=0.7)
        assert time.monotonic() - started < 1.7
    assert budget.status is UNAVAILABLE


def test_an_api_that_is_down_or_rejects_the_token_is_not_asked_again(hosted: Path):
    env = api_env(STATEWISE_GITHUB_API_URL=dead_port())
    assert protection(hosted, env).status is UNAVAILABLE
    assert "cached" in protection(hosted, env).detail
    with api_server({f"{BASE}/branches/main/protection": github_bad_credentials()}) as server:
        env = api_env(STATEWISE_GITHUB_API_URL=server.url, GH_TOKEN="expired")
        assert protection(hosted, env).status is UNAVAILABLE
        cached = protection(hosted, env)
        assert cached.status is UNAVAILABLE and "Bad credentials" in cached.detail and "cached" in cached.detail
        assert len(server.seen) == 1  # the second call never reached the server
        # Another token is another question.
        protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url, GH_TOKEN="fresh"))
        assert len(server.seen) == 2


def test_the_negative_cache_expires(hosted: Path):
    env = api_env(STATEWISE_GITHUB_API_URL=dead_port(), STATEWISE_API_NEGATIVE_TTL="0.2")
    protection(hosted, env)
    assert "cached" in protection(hosted, env).detail
    time.sleep(0.3)
    assert "cached" not in protection(hosted, env).detail


def test_a_server_error_on_the_classic_endpoint_is_unavailable(hosted: Path):
    with api_server({f"{BASE}/branches/main/protection": (500, {"message": "Server Error"})}) as server:
        seen = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url))
        again = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url))
    assert seen.status is UNAVAILABLE and "500" in seen.detail
    assert again.status is UNAVAILABLE and "cached" in again.detail and len(server.seen) == 1


def test_a_self_hosted_gitlab_is_named_by_the_binding(tmp_path: Path):
    work = tmp_path / "self"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "a.txt", "a")
    git(work, "remote", "add", "origin", "ssh://git@git.corp.example:2222/team/app.git")
    routes = {"/api/v4/projects/team%2Fapp/protected_branches?per_page=100&page=1": (200, [gitlab_protected("main")])}
    with api_server(routes) as server:
        seen = protection(work, api_env(), provider="gitlab", api_url=f"{server.url}/api/v4")
    assert seen.status is OBSERVED and seen.value is True
    without = protection(work, api_env(), provider="gitlab")
    assert without.status is UNAVAILABLE and "STATEWISE_GITLAB_API_URL" in without.detail


def test_a_public_repository_without_a_token(hosted: Path):
    # Without a token the protection endpoint wants authentication; the rulesets and branch
    # endpoints of a public repository answer anyway, and they decide.
    routes = {
        f"{BASE}/branches/main/protection": (401, {"message": "Requires authentication", "status": "401"}),
        f"{BASE}/rules/branches/main{RULES}": (200, []),
        f"{BASE}/branches/main": github_branch("main", False),
    }
    with api_server(routes) as server:
        seen = protection(hosted, api_env(STATEWISE_GITHUB_API_URL=server.url))
    assert seen.status is OBSERVED and seen.value is False
    assert [path for path, _ in server.seen] == [f"{BASE}/branches/main/protection",
                                                 f"{BASE}/rules/branches/main{RULES}", f"{BASE}/branches/main"]
