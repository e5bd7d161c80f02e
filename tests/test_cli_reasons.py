"""A stop's reason on the terminal: the sentence, one line per fact, one line per distinct error."""

from __future__ import annotations

import os
import subprocess
import sys

from statewise.cli.reasons import reason_lines

# The gate's own wording (statewise.pipeline.gate, .resolution), as `statewise guard` printed it
# without a network: one DNS failure, told once per key that needed the host.
DNS = "[Errno -2] Name or service not known"
GET = "GET https://api.github.com/repos/acme/app/branches?protected=true&per_page=100&page=1 failed: " + DNS
OFFLINE = (
    "invariant:no_direct_push_to_protected_branch: Protected branches take changes through pull requests, not "
    "direct pushes. [repository.protected_branches: unknown (git.protected_branches could not observe "
    "repository.protected_branches: acme/app (https://api.github.com, token: no token): " + GET + "); "
    'git.current_branch = "main" (HEAD of /src/app is branch main); repository.protected: unknown '
    "(git.branch_protection could not observe repository.protected: acme/app (https://api.github.com, token: no "
    "token): https://api.github.com: " + GET + " (cached: not asked again for up to 60s))]"
)


def test_one_error_for_many_keys_is_told_once():
    lines = reason_lines(OFFLINE)
    assert lines == [
        "invariant:no_direct_push_to_protected_branch: Protected branches take changes through pull requests, "
        "not direct pushes.",
        f"repository.protected_branches, repository.protected: unknown ({GET})",
        'git.current_branch = "main" (HEAD of /src/app is branch main)',
    ]
    assert sum(line.count(DNS) for line in lines) == 1


def test_distinct_errors_keep_a_line_each_and_a_single_failure_stays_whole():
    other = ("repository.protected: unknown (git.branch_protection could not observe repository.protected: "
             "gitlab.example.com: GET https://gitlab.example.com/api failed: [Errno 111] Connection refused)")
    single = ("repository.protected_branches: unknown (git.protected_branches could not observe "
              "repository.protected_branches: acme/app: " + GET + ")")
    lines = reason_lines(f"Stop. [{single}; {other}]")
    assert lines == ["Stop.", single, other]


def test_a_reason_without_facts_is_one_line():
    assert reason_lines("every check passed") == ["every check passed"]
    assert reason_lines("a list [of things] in the middle") == ["a list [of things] in the middle"]
    assert reason_lines("ends with [Errno 1]x") == ["ends with [Errno 1]x"]


def test_guard_without_its_host_prints_the_error_once(tmp_path):
    # A real repository whose origin is on GitHub, and a GitHub API that refuses connections (a
    # closed loopback port): as with no network, both protection keys fail for one error.
    work = tmp_path / "app"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=work, check=True)
    subprocess.run([*git, "remote", "add", "origin", "https://github.com/acme/app.git"], cwd=work, check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
    env.update(STATEWISE_GITHUB_API_URL="http://127.0.0.1:9", HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path),
               GH_TOKEN="", GITHUB_TOKEN="", PATH=os.environ["PATH"])
    run = [sys.executable, "-m", "statewise"]
    assert subprocess.run([*run, "init"], cwd=work, env=env, capture_output=True).returncode == 0
    done = subprocess.run([*run, "guard", "--task", "push the changes"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    stop = done.stdout[done.stdout.index("stop: "):]
    assert stop.count("Connection refused") == 1, stop
    assert "repository.protected_branches, repository.protected: unknown (" in stop
