"""A reason tells each error once: facts the gate could not observe for the same error are one
fact naming every key (statewise.pipeline.reasons), in the hook's answer to the agent as in
``statewise guard``'s output."""

from __future__ import annotations

from statewise.pipeline.reasons import merge_unobserved, split_facts
from statewise.sandbox import git
from tests.integrations.installed import make_project

REFUSED = "GET http://127.0.0.1:9/repos/acme/app/branches failed: [Errno 111] Connection refused"


def _unobserved(key: str, actor: str, detail: str) -> str:
    return f"{key}: unknown ({actor} could not observe {key}: {detail})"


def test_facts_unobserved_for_one_error_become_one_in_place_of_the_first():
    facts = [_unobserved("repository.protected_branches", "git.protected_branches", f"acme/app: {REFUSED}"),
             'git.current_branch = "main"',
             _unobserved("repository.protected", "git.branch_protection",
                         f"acme/app: http://127.0.0.1:9: {REFUSED} (cached: not asked again for up to 60s)")]
    assert merge_unobserved(facts) == [
        f"repository.protected_branches, repository.protected: unknown ({REFUSED})", 'git.current_branch = "main"']


def test_distinct_errors_and_a_single_failure_stay_as_they_are():
    one = _unobserved("repository.protected", "git.branch_protection", "gitlab: [Errno 111] Connection refused")
    other = _unobserved("repository.protected_branches", "git.protected_branches", f"acme/app: {REFUSED}x")
    assert merge_unobserved([one, other]) == [one, other]
    assert merge_unobserved(["a = 1"]) == ["a = 1"]
    assert split_facts("Stop. [a = 1; b: none (x; y)]") == ("Stop.", ["a = 1", "b: none (x; y)"])


def test_the_hooks_deny_without_its_host_tells_the_error_once(tmp_path):
    # A push to a GitHub origin whose API refuses connections (a closed loopback port), as with no
    # network: both protection keys fail for one error, and the agent reads it once.
    project = make_project(tmp_path)
    git(project.work, "remote", "set-url", "origin", "https://github.com/acme/app.git")
    project.env.update(STATEWISE_GITHUB_API_URL="http://127.0.0.1:9", GH_TOKEN="", GITHUB_TOKEN="")
    answer = project.bash("git push origin main")
    assert answer.decision == "deny", answer
    assert answer.reason.count("Connection refused") == 1, answer.reason
