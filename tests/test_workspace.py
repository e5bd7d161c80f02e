"""Deriving a task's scope from real git repositories with real remotes of every form.

The origin is a real bare repository. Local forms (relative, absolute, ``file://``, through a
symlink) are fetched by git directly; the HTTP form is served over loopback by a static
file server (git's "dumb" HTTP protocol), with credentials and a port in the URL; the SSH
forms (scp-like and ``ssh://``) go through ``GIT_SSH_COMMAND`` set to a script that runs the
requested ``git-upload-pack`` on this machine, which is what sshd would do on the host.
Every form that git can fetch from must give one repository identity.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewise.cli import main
from statewise.errors import ScopeError
from statewise.sandbox import git, make_git_sandbox
from statewise.scopes import Scope
from statewise.store import default_location, open_store
from statewise.workspace import derive_task_scope, find_repository_root

FAKE_SSH = """#!/bin/sh
# Stands in for ssh to 127.0.0.1: drop ssh's options and the host, then run the remote
# command (git-upload-pack '<path>') here, with the path taken relative to the served root.
while [ $# -gt 0 ]; do
  case "$1" in
    -p|-o|-l|-i) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
shift  # the [user@]host
cd "{root}" || exit 1
exec sh -c "$(printf '%s' "$*" | sed "s#'/#'#")"
"""


def _git_env(tmp_path: Path) -> dict[str, str]:
    ssh = tmp_path / "fake-ssh"
    ssh.write_text(FAKE_SSH.format(root=tmp_path / "sb"))
    ssh.chmod(ssh.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "GIT_SSH_COMMAND": str(ssh), "GIT_SSH_VARIANT": "ssh", "GIT_TERMINAL_PROMPT": "0",
            "HOME": str(tmp_path)}


def _ls_remote(work: Path, env: dict[str, str]) -> str:
    done = subprocess.run(["git", "ls-remote", "origin", "refs/heads/main"], cwd=work, capture_output=True,
                          text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"git could not reach the remote: {done.stderr}"
    return done.stdout.split()[0]


@pytest.fixture
def sandbox(tmp_path):
    return make_git_sandbox(tmp_path / "sb")


@pytest.fixture
def http_root(sandbox):
    """A loopback HTTP server serving the sandbox folder (the bare origin readable as dumb HTTP)."""
    git(sandbox.origin, "update-server-info")
    handler = functools.partial(_QuietHandler, directory=str(sandbox.root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass


def test_every_local_remote_form_gives_one_identity(sandbox, tmp_path):
    env = _git_env(tmp_path)
    (tmp_path / "link").symlink_to(sandbox.root)
    expected = "local/" + str(sandbox.origin.resolve()).strip("/").removesuffix(".git")
    head = _ls_remote(sandbox.work, env)
    forms = ["../origin.git", "./../origin.git", str(sandbox.origin), f"file://{sandbox.origin}",
             str(tmp_path / "link" / "origin.git"), f"{sandbox.origin}/", f"file://localhost{sandbox.origin}"]
    for form in forms:
        git(sandbox.work, "remote", "set-url", "origin", form)
        assert _ls_remote(sandbox.work, env) == head, form  # git really reaches the origin this way
        task = derive_task_scope(sandbox.work / ".")
        assert task.repo == expected, form
        assert task.branch == "main"
    # The sandbox's own identity (the absolute path) is the same one.
    assert sandbox.repo_identity == expected


def test_ssh_scp_and_http_forms_with_credentials_and_ports_agree(sandbox, tmp_path, http_root):
    env = _git_env(tmp_path)
    head = _ls_remote(sandbox.work, env)
    reachable = [
        "git@127.0.0.1:origin.git",
        "ssh://git@127.0.0.1:2222/origin.git",
        "ssh://127.0.0.1/origin.git",
        f"http://alice:s3cr3t@127.0.0.1:{http_root}/origin.git",
        f"http://127.0.0.1:{http_root}/origin.git/",
    ]
    for form in reachable:
        git(sandbox.work, "remote", "set-url", "origin", form)
        assert _ls_remote(sandbox.work, env) == head, form
        task = derive_task_scope(sandbox.work)
        assert task.repo == "127.0.0.1/origin", form
        assert "s3cr3t" not in str(task) and "alice" not in str(task)
    # HTTPS (no TLS server here: the URL is configured, not fetched) agrees with the rest.
    git(sandbox.work, "remote", "set-url", "origin", "https://bob:ghp_token@127.0.0.1:8443/origin.git")
    assert derive_task_scope(sandbox.work).repo == "127.0.0.1/origin"


def test_a_relative_origin_keeps_the_hook_and_record_list_working(sandbox, tmp_path):
    git(sandbox.work, "remote", "set-url", "origin", "../origin.git")
    scope = f"repo:{sandbox.repo_identity}@main"
    store = str(tmp_path / "store.db")
    runner = CliRunner()
    added = runner.invoke(main, ["--store", store, "record", "add", "repository.protected", "false", "--scope", scope])
    assert added.exit_code == 0, added.output
    listed = runner.invoke(main, ["--store", store, "record", "list", "--cwd", str(sandbox.work), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [r["scope"] for r in json.loads(listed.output)["records"]] == [scope]

    _assert_the_hook_works(sandbox.work, store)


def _hook(cwd: Path, store: str, command: str) -> subprocess.CompletedProcess[str]:
    """The real hook entry point, fed Claude Code's PreToolUse JSON on stdin."""
    payload = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(cwd),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "work"}, "tool_use_id": "toolu_1"}
    return subprocess.run([sys.executable, "-m", "statewise.cli", "--store", store, "hook", "claude-code"],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=120)


def _assert_the_hook_works(work: Path, store: str) -> None:
    """A read-only command passes quietly; a force push to the protected main is denied on
    the stored record, not on a scope error."""
    quiet = _hook(work, store, "git status")
    assert quiet.returncode == 0 and json.loads(quiet.stdout) == {}, quiet.stderr
    forced = _hook(work, store, "git push --force origin main")
    assert forced.returncode == 0, forced.stderr
    decision = json.loads(forced.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "bad scope" not in decision["permissionDecisionReason"]
    assert "repository.protected" in decision["permissionDecisionReason"]


def test_a_repository_path_with_a_space_is_a_valid_scope(tmp_path):
    sandbox = make_git_sandbox(tmp_path / "my projects" / "sb")
    git(sandbox.work, "remote", "remove", "origin")
    task = derive_task_scope(sandbox.work)
    assert task.repo is not None and "my%20projects" in task.repo and " " not in task.repo
    assert Scope.parse(f"repo:{task.repo}@main") == Scope.repo(task.repo, "main")
    git(sandbox.work, "remote", "add", "origin", str(sandbox.origin))
    with_origin = derive_task_scope(sandbox.work)
    assert with_origin.repo == sandbox.repo_identity and "my%20projects" in with_origin.repo

    store = str(tmp_path / "store.db")
    runner = CliRunner()
    scope = f"repo:{with_origin.repo}"
    added = runner.invoke(main, ["--store", store, "record", "add", "project.test_command", "pytest -x",
                                 "--scope", scope])
    assert added.exit_code == 0, added.output
    listed = runner.invoke(main, ["--store", store, "record", "list", "--cwd", str(sandbox.work), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [r["value"] for r in json.loads(listed.output)["records"]] == ["pytest -x"]
    added = runner.invoke(main, ["--store", store, "record", "add", "repository.protected", "false", "--scope",
                                 f"repo:{with_origin.repo}@main"])
    assert added.exit_code == 0, added.output
    _assert_the_hook_works(sandbox.work, store)


@pytest.mark.parametrize(
    "url",
    ["https://dev.azure.com/org/My%20Project/_git/My%20Repo",
     "https://org@dev.azure.com/org/My%20Project/_git/My%20Repo",
     "https://dev.azure.com/org/My Project/_git/My Repo",
     "git@ssh.dev.azure.com:v3/org/My%20Project/My%20Repo",
     "ssh://git@ssh.dev.azure.com:22/v3/org/My%20Project/My%20Repo",
     "https://org.visualstudio.com/DefaultCollection/My%20Project/_git/My%20Repo"],
)
def test_azure_devops_remotes_with_spaces_give_one_valid_identity(sandbox, tmp_path, url):
    git(sandbox.work, "remote", "set-url", "origin", url)
    task = derive_task_scope(sandbox.work)
    assert task.repo == "dev.azure.com/org/My%20Project/_git/My%20Repo"
    assert task.branch == "main"
    # a read needs an existing store (issue 14): create it first
    assert CliRunner().invoke(main, ["--store", str(tmp_path / "s.db"), "init"]).exit_code == 0
    listed = CliRunner().invoke(main, ["--store", str(tmp_path / "s.db"), "record", "list", "--cwd",
                                       str(sandbox.work), "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)["task"].endswith("repo:dev.azure.com/org/My%20Project/_git/My%20Repo@main")


def test_undecodable_git_output_leaves_parts_unknown_or_encoded(sandbox):
    # A remote URL with a byte that is not UTF-8: the identity spells it as %FF.
    subprocess.run([b"git", b"config", b"remote.origin.url", b"/srv/repos/caf\xff.git"], cwd=sandbox.work,
                   check=True, timeout=30)
    task = derive_task_scope(sandbox.work)
    assert task.repo == "local/srv/repos/caf%FF"
    # A branch whose name is not UTF-8: the repository is known, the branch unknown.
    subprocess.run([b"git", b"symbolic-ref", b"HEAD", b"refs/heads/\xfe\xff"], cwd=sandbox.work, check=True,
                   timeout=30)
    task = derive_task_scope(sandbox.work)
    assert task.repo == "local/srv/repos/caf%FF"
    assert task.branch is None


def test_a_nul_byte_in_the_working_directory_is_a_clear_scope_error(sandbox):
    with pytest.raises(ScopeError, match="NUL byte"):
        derive_task_scope(f"{sandbox.work}\x00/etc")


def test_a_working_directory_whose_name_is_not_utf8_is_a_clear_scope_error(sandbox):
    odd = os.path.join(os.fsencode(sandbox.work), b"caf\xe9")
    os.mkdir(odd)
    with pytest.raises(ScopeError, match="must be UTF-8"):
        derive_task_scope(os.fsdecode(odd))


def _assert_store_at_root_when_git_fails(sandbox, monkeypatch, tmp_path):
    sub = sandbox.work / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.delenv("STATEWISE_STORE", raising=False)
    assert find_repository_root(sub) == sandbox.work
    location = default_location(sub)
    assert location == str(sandbox.work / ".statewise" / "store.db")
    open_store(location).close()
    assert not (sub / ".statewise").exists() and not (sandbox.work / "src" / ".statewise").exists()
    # The CLI with no --store, run from the subdirectory, uses the root's store too.
    monkeypatch.chdir(sub)
    listed = CliRunner().invoke(main, ["record", "list", "--cwd", str(sub), "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)["records"] == []
    assert not (sub / ".statewise").exists() and (sandbox.work / ".statewise" / "store.db").is_file()


def test_when_git_fails_the_store_is_still_at_the_repository_root(sandbox, monkeypatch, tmp_path):
    # GIT_DIR naming nothing makes every git call in the worktree fail, as a broken setup does.
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "no-such-git-dir"))
    sub_task = derive_task_scope(sandbox.work)
    assert sub_task.repo is None and sub_task.branch is None and sub_task.workspace == str(sandbox.work)
    _assert_store_at_root_when_git_fails(sandbox, monkeypatch, tmp_path)


def test_when_git_is_missing_the_store_is_still_at_the_repository_root(sandbox, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert derive_task_scope(sandbox.work).repo is None
    _assert_store_at_root_when_git_fails(sandbox, monkeypatch, tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown the repository")
def test_when_git_refuses_a_dubious_owner_the_store_is_still_at_the_root(sandbox, monkeypatch, tmp_path):
    for path in (sandbox.work, *sandbox.work.rglob("*")):
        os.lchown(path, 54321, 54321)
    monkeypatch.setenv("HOME", str(tmp_path))  # no global safe.directory
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=sandbox.work, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode != 0 and "dubious ownership" in done.stderr
    _assert_store_at_root_when_git_fails(sandbox, monkeypatch, tmp_path)


def test_outside_git_an_existing_store_above_is_found(tmp_path, monkeypatch):
    monkeypatch.delenv("STATEWISE_STORE", raising=False)
    project = tmp_path / "project"
    (project / "docs" / "deep").mkdir(parents=True)
    assert default_location(project / "docs" / "deep") == str((project / "docs" / "deep").resolve() / ".statewise"
                                                              / "store.db")
    open_store(str(project / ".statewise" / "store.db")).close()
    assert default_location(project / "docs" / "deep") == str(project.resolve() / ".statewise" / "store.db")


def test_git_answers_are_kept_within_one_block_and_only_there(tmp_path, monkeypatch):
    import shutil

    from statewise.workspace import git_answers_kept

    real_git = shutil.which("git")
    log = tmp_path / "git.log"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real_git}" "$@"\n')
    shim.chmod(0o755)
    repo = tmp_path / "repo"
    subprocess.run([real_git, "init", "-q", str(repo)], check=True)
    (repo / "sub").mkdir()
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")

    def asked() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    assert find_repository_root(repo) == find_repository_root(repo) == repo.resolve()
    assert asked() == 2  # outside a block every call asks git
    with git_answers_kept():
        assert find_repository_root(repo) == find_repository_root(str(repo)) == repo.resolve()
        assert asked() == 3  # one question per directory, whether named by a Path or a string
        assert find_repository_root(repo / "sub") == repo.resolve()
        assert asked() == 4  # another directory is another question
    assert find_repository_root(repo) == repo.resolve()
    assert asked() == 5  # the block's answers end with it


def _shim_git(tmp_path: Path, body: str) -> Path:
    shim = tmp_path / "shim-bin" / "git"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text(f"#!/bin/sh\n{body}\n")
    shim.chmod(0o755)
    return shim.parent


def test_git_output_reads_what_subprocess_reads_and_fails_as_it_does(sandbox, tmp_path):
    from statewise.workspace import git_output_bytes

    for args in (("rev-parse", "--show-toplevel"), ("symbolic-ref", "--quiet", "--short", "HEAD"),
                 ("log", "--format=%H%n%s", "-n", "3"), ("ls-files", "-z")):
        done = subprocess.run(["git", *args], cwd=sandbox.work, capture_output=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0
        assert git_output_bytes(sandbox.work, *args) == done.stdout.rstrip(b"\r\n")
    assert git_output_bytes(sandbox.work, "rev-parse", "--verify", "no-such-ref") is None  # git failed
    assert git_output_bytes(tmp_path / "missing", "rev-parse", "--show-toplevel") is None  # no such directory
    assert git_output_bytes("", "rev-parse", "--show-toplevel") is None  # subprocess refuses cwd="" too
    assert git_output_bytes(sandbox.work, "rev-parse", "a\x00b") is None  # a NUL in an argument


def test_git_output_gives_stdout_only_and_a_large_answer_whole(tmp_path, monkeypatch):
    from statewise.workspace import git_output_bytes

    # stderr is discarded and stdin is empty, as with capture_output=True, stdin=DEVNULL.
    bin_dir = _shim_git(tmp_path, 'echo noise >&2\ncat\nhead -c 300000 /dev/zero | tr "\\0" x\necho')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert git_output_bytes(tmp_path, "anything") == b"x" * 300_000


def test_git_past_its_timeout_is_killed_and_reaped(tmp_path, monkeypatch):
    import time

    from statewise.workspace import git_output_bytes

    pid_file = tmp_path / "pid"
    bin_dir = _shim_git(tmp_path, f'echo $$ > "{pid_file}"\nexec sleep 30')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    started = time.monotonic()
    assert git_output_bytes(tmp_path, "status", timeout=0.5) is None
    assert time.monotonic() - started < 10
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and waited for: not even a zombie is left
        os.kill(pid, 0)


def test_git_failing_to_start_is_no_answer(tmp_path, monkeypatch):
    from statewise.workspace import git_output_bytes

    bin_dir = _shim_git(tmp_path, "exit 0")
    (bin_dir / "git").chmod(0o644)  # on PATH but not executable: the spawn itself fails
    monkeypatch.setenv("PATH", str(bin_dir))
    assert git_output_bytes(tmp_path, "status") is None
