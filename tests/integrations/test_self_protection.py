"""The guard guards itself, without any record (issue 25): StateWise's settings, store and
wrapper, the clients' hook settings, git's hooks, config and refs are never written, deleted or
moved by the agent, whatever tool it uses; everything through the installed hook, in a real
repository with a real bare origin and no fs.protected_paths record."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess

import pytest

from statewise.protection import SELF_PROTECTED, Places, check_path
from statewise.sandbox import git
from tests.integrations.installed import make_project

# (command, a piece of the protected target the reason must name)
SHELL_WRITES = [
    ("printf 'on-pass = \"allow\"\\n' > .statewise/config.toml", ".statewise/config.toml"),
    ("printf 'store = \"build/empty.db\"\\n' > .statewise/config.toml", ".statewise/config.toml"),
    ("rm -f .statewise/store.db", ".statewise/store.db"),
    ("rm -f .statewise/store.db-wal .statewise/store.db-shm", ".statewise/store.db-wal"),
    ("mv .statewise/store.db /tmp/elsewhere.db", ".statewise/store.db"),
    ("rm -rf .statewise", ".statewise"),
    ("echo exit 0 > .statewise/bin/statewise-hook", ".statewise/bin/statewise-hook"),
    ("echo '{}' > .claude/settings.json", ".claude/settings.json"),
    ("echo '{}' > .claude/settings.local.json", ".claude/settings.local.json"),
    ("rm .codex/hooks.json", ".codex/hooks.json"),
    ("sed -i s/statewise/true/ .gemini/settings.json", ".gemini/settings.json"),
    ("awk -i inplace '{ sub(/statewise/, \"true\") } 1' .claude/settings.json", ".claude/settings.json"),
    # a database shell can change the file it opens whatever its statements (sqlite3 -readonly reads)
    ("sqlite3 .statewise/store.db 'delete from records'", ".statewise/store.db"),
    ("sqlite3 .statewise/store.db 'select 1'", ".statewise/store.db"),
    ("printf '#!/bin/sh\\nrm -rf migrations\\n' > .git/hooks/post-checkout", ".git/hooks/post-checkout"),
    ("cp /bin/true .git/hooks/pre-push", ".git/hooks/pre-push"),
    ("printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config", ".git/config"),
    ("echo '{}' > ~/.claude/settings.json", ".claude/settings.json"),
    ("mkdir -p ~/.statewise && echo x > ~/.statewise/config.toml", ".statewise/config.toml"),
    ("cd src && echo x > ../.statewise/config.toml", ".statewise/config.toml"),
    ("git clean -fdx", ".claude"),  # git lists what it removes in order; the first is named
    ("git rev-parse feature > ../origin.git/refs/heads/main", "origin.git/refs/heads/main"),
    ("git rev-parse feature > .git/refs/heads/main", ".git/refs/heads/main"),
    # a local origin's own rules: the hook that refuses pushes to main, its receive.* settings
    ("rm ../origin.git/hooks/pre-receive", "origin.git/hooks/pre-receive"),
    ("printf '[receive]\\n\\tdenyNonFastForwards = false\\n' >> ../origin.git/config", "origin.git/config"),
    ("rm ../origin.git/refs/heads/main", "origin.git/refs/heads/main"),
    # a stash of untracked (-u) or also ignored (-a) files takes them out of the work tree: here the
    # clients' settings are not committed, and -a takes the ignored .statewise/ too
    ("git stash -u", ".claude"),
    ("git stash push --all -m wip", ".claude"),
    # The installed command finds the nearest wrapper from the session's folder upwards: one
    # planted in a subfolder would be run instead of the real one (a Codex session started there).
    ("mkdir -p src/.statewise/bin && printf '#!/bin/sh\\nexit 0\\n' > src/.statewise/bin/statewise-hook",
     "src/.statewise"),
    ("cp -r /tmp src/.statewise", "src/.statewise"),
    ("ln -s /tmp src/.statewise", "src/.statewise"),
    # archives and diffs of the workspace (planted by the fixture) that write the hook settings
    ("tar xf build/in/settings.tar", ".claude/settings.json"),
    ("tar -xzf build/in/hooks.tgz -C .git", ".git/hooks/pre-push"),
    ("unzip -o build/in/config.zip", ".statewise/config.toml"),
    ("unzip -o build/in/hooks.zip -d .git", ".git/hooks/pre-push"),
    ("patch -p1 < build/in/settings.diff", ".claude/settings.json"),
    ("patch -p1 -i build/in/settings.diff", ".claude/settings.json"),
    ("git apply build/in/settings.diff", ".claude/settings.json"),
    # A folder or pipe made where the store's journal goes stops every later write of the store.
    ("mkdir .statewise/store.db-journal", ".statewise/store.db-journal"),
    ("mkdir -p -m 700 build .statewise/store.db-wal", ".statewise/store.db-wal"),
    ("sudo mkdir -- .statewise/store.db-shm", ".statewise/store.db-shm"),
    ("sudo -n mkdir .statewise/store.db-journal", ".statewise/store.db-journal"),
    ("mkfifo .statewise/store.db-journal", ".statewise/store.db-journal"),
    ("mkdir -p .git/hooks/pre-push", ".git/hooks/pre-push"),
]


def _plant_archives_and_diffs(work):
    """Real archives and diffs under build/in/: ones holding StateWise's and the clients' files,
    and ordinary ones (a package for build/, a change to src/app.py)."""
    import io
    import tarfile
    import zipfile

    incoming = work / "build" / "in"
    incoming.mkdir(parents=True)

    def tar(name, members, mode):
        with tarfile.open(incoming / name, mode) as archive:
            for member, text in members.items():
                info = tarfile.TarInfo(member)
                info.size = len(text)
                archive.addfile(info, io.BytesIO(text))

    def zip_(name, members):
        with zipfile.ZipFile(incoming / name, "w") as archive:
            for member, text in members.items():
                archive.writestr(member, text)

    tar("settings.tar", {".claude/settings.json": b"{}\n"}, "w")
    tar("hooks.tgz", {"hooks/pre-push": b"#!/bin/sh\nexit 0\n"}, "w:gz")
    tar("package.tgz", {"package/index.js": b"1\n", "package/README": b"x\n"}, "w:gz")
    zip_("config.zip", {".statewise/config.toml": b'on-pass = "allow"\n'})
    zip_("hooks.zip", {"hooks/pre-push": b"#!/bin/sh\nexit 0\n"})
    (incoming / "settings.diff").write_text("--- a/.claude/settings.json\n+++ b/.claude/settings.json\n"
                                            "@@ -1 +1 @@\n-{}\n+{\"hooks\": {}}\n")
    (incoming / "app.diff").write_text("diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n"
                                       "+++ b/src/app.py\n@@ -1 +1 @@\n-print(1)\n+print(2)\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    made = make_project(tmp_path_factory.mktemp("self"), protected=None)
    _plant_archives_and_diffs(made.work)
    return made


@pytest.mark.parametrize(("command", "target"), SHELL_WRITES, ids=[c for c, _ in SHELL_WRITES])
def test_shell_writes_to_statewise_and_hook_files_are_denied(project, command, target):
    answer = project.bash(command)
    assert answer.decision == "deny", answer
    assert target in answer.reason and "protect" in answer.reason, answer


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_every_client_is_denied_the_same_writes(project, agent):
    for command, target in SHELL_WRITES[:4]:
        answer = project.bash(command, agent=agent)
        assert answer.decision == "deny", (agent, command, answer)
        assert target in answer.reason


FILE_TARGETS = [".statewise/config.toml", ".claude/settings.json", ".git/hooks/post-checkout", ".codex/hooks.json"]


@pytest.mark.parametrize("target", FILE_TARGETS)
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_claude_code_file_tools_are_denied(project, tool, target):
    answer = project.call(project.work / "src", tool, {"file_path": str(project.work / target), "content": "{}",
                                                       "old_string": "a", "new_string": "b"})
    assert answer.decision == "deny", answer
    assert target in answer.reason


def test_a_write_of_the_user_settings_file_is_denied(project):
    answer = project.call(project.work, "Write", {"file_path": str(project.home / ".claude" / "settings.json"),
                                                  "content": "{}"})
    assert answer.decision == "deny", answer


@pytest.mark.parametrize("kind", ["Update", "Add", "Delete"])
def test_codex_apply_patch_is_denied(project, kind):
    patch = f"*** Begin Patch\n*** {kind} File: .statewise/config.toml\n+on-pass = \"allow\"\n*** End Patch\n"
    answer = project.call(project.work, "apply_patch", {"input": patch}, agent="codex")
    assert answer.decision == "deny" and answer.exit_code == 2, answer
    assert ".statewise/config.toml" in answer.reason


@pytest.mark.parametrize("tool", ["write_file", "replace"])
def test_gemini_file_tools_are_denied(project, tool):
    answer = project.call(project.work, tool, {"file_path": ".gemini/settings.json", "content": "{}",
                                               "old_string": "a", "new_string": "b"}, agent="gemini")
    assert answer.decision == "deny", answer
    assert ".gemini/settings.json" in answer.reason


def test_a_configured_hooks_path_is_protected(tmp_path):
    project = make_project(tmp_path, protected=None)
    git(project.work, "config", "core.hooksPath", ".githooks")  # the developer's own setting
    answer = project.bash("mkdir -p .githooks && echo 'rm -rf migrations' > .githooks/post-checkout")
    assert answer.decision == "deny", answer
    assert "core.hooksPath" in answer.reason


def test_a_store_named_by_the_settings_is_protected_wherever_it_is(tmp_path, monkeypatch):
    from statewise.settings import approve_config

    project = make_project(tmp_path, protected=None)
    (project.work / ".statewise" / "config.toml").write_text('store = "data/guard.db"\n')
    monkeypatch.setenv("HOME", str(project.home))
    approve_config(project.work / ".statewise" / "config.toml")  # another store is honoured once approved
    (project.work / "data").mkdir()
    answer = project.bash("rm -f data/guard.db")
    assert answer.decision == "deny", answer
    assert "data/guard.db" in answer.reason



def test_the_warm_workers_folder_is_never_written_by_the_agent(tmp_path):
    # A process listening on the worker's socket answers every guarded call: the agent must not
    # remove the real one's socket or lock, nor place its own there.
    project = make_project(tmp_path, protected=None, warm=True)
    runtime = project.env["STATEWISE_RUNTIME_DIR"]
    for command in (f"rm -f {runtime}/*.sock", f"echo x > {runtime}/planted.sock", f"rm -rf {runtime}",
                    f"mv {runtime} {tmp_path}/elsewhere", f"rm {runtime}/abc.lock", f"ln -sf /tmp/fake.sock {runtime}/abc.sock"):
        answer = project.bash(command)
        assert answer.decision == "deny", (command, answer)
        assert "warm worker" in answer.reason, (command, answer)
    answer = project.call(project.work, "Write", {"file_path": f"{runtime}/abc.lock", "content": "x"})
    assert answer.decision == "deny" and "warm worker" in answer.reason, answer
    assert project.bash(f"ls {runtime}").decision not in ("deny", "ask")  # looking is fine



def test_nothing_is_planted_in_statewises_cache(project):
    # The cache holds the compiled contracts, the contracts' digests and the session notes.
    cache = project.env["STATEWISE_CACHE_DIR"]
    for command in (f"echo '{{}}' > {cache}/contract-digests.json", f"mkdir -p {cache}/x && cp /dev/null {cache}/x/y"):
        answer = project.bash(command)
        assert answer.decision == "deny" and "cache" in answer.reason, (command, answer)
    assert project.bash(f"ls {cache}").decision not in ("deny", "ask")


READS_AND_ORDINARY_WORK = ["cat .statewise/config.toml", "cat .claude/settings.json", "ls .git/hooks",
                           "git status", "echo x > notes.txt", "rm -f build/out.txt", "git log --oneline -3",
                           "cat .env.example", "mkdir -p build && cp README.md build/",
                           "sqlite3 -readonly .statewise/store.db 'select count(*) from records'",
                           "sqlite3 build/app.db 'select 1'",
                           "tar -xzf build/in/package.tgz -C build", "patch -p1 < build/in/app.diff",
                           "git apply build/in/app.diff", "unzip -o build/in/hooks.zip -d build/vendor",
                           "git stash list", "mkdir -p -m 755 build/out src/pkg", "mkfifo build/pipe"]


@pytest.mark.parametrize("command", READS_AND_ORDINARY_WORK)
def test_reading_statewise_files_and_ordinary_work_pass(project, command):
    answer = project.bash(command)
    assert answer.decision not in ("deny", "ask"), answer


def test_the_protected_files_are_unchanged_after_the_denials(project):
    settings = json.loads((project.work / ".claude" / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]
    assert (project.work / ".statewise" / "store.db").exists()


def test_every_self_protected_target_is_named_with_why(tmp_path):
    home, repo = tmp_path / "home", tmp_path / "repo"
    places = Places(home=home, config_home=home / ".config", repo_root=repo, git_dirs=(repo / ".git",))
    anchors = {"home": home, "config": home / ".config", "repo": repo, "git": repo / ".git"}
    for item in SELF_PROTECTED:
        path = anchors[item.anchor] / item.path.rstrip("/").replace("*", "") / ("x" if item.path.endswith("/") else "")
        for use in ("write", "delete"):
            finding = check_path(path, use, places)
            assert finding is not None and finding.effect == "deny" and finding.why == item.why, (item, use)
        assert check_path(path, "read", places) is None


def test_a_checkout_that_replaces_tracked_hook_settings_is_denied(tmp_path):
    project = make_project(tmp_path, protected=None)
    work = project.work
    git(work, "add", "-f", ".claude/settings.json")
    git(work, "commit", "-q", "-m", "hooks")
    git(work, "branch", "topic")  # the same hooks
    git(work, "checkout", "-q", "-b", "unhooked")
    (work / ".claude" / "settings.json").write_text("{}\n")
    git(work, "commit", "-q", "-am", "no hooks")
    git(work, "checkout", "-q", "main")
    for command in ("git checkout unhooked", "git switch unhooked", "git reset --hard unhooked",
                    "git checkout unhooked -- .", "git restore --source=unhooked -- .claude"):
        answer = project.bash(command)
        assert answer.decision == "deny", (command, answer)
        assert ".claude/settings.json" in answer.reason
    for command in ("git checkout topic", "git checkout unhooked -- src"):
        assert project.bash(command).decision != "deny", command
    # feature predates the hooks commit: checking it out would delete the tracked settings file
    assert project.bash("git checkout feature").decision == "deny"


def test_find_deleting_by_name_reaches_only_what_the_name_matches(project):
    # find's name filter decides what it deletes: clearing __pycache__ folders is ordinary work
    # even though the search root holds the clients' settings; a filter that names a protected
    # file, or one StateWise cannot read (-newer), still reaches it.
    cache = project.work / "src" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "app.cpython-311.pyc").write_bytes(b"")
    for agent in ("claude-code", "codex", "gemini"):
        answer = project.bash("find . -name '__pycache__' -type d -prune -exec rm -rf {} +", agent=agent)
        assert answer.decision not in ("deny", "ask"), (agent, answer)
    named = project.bash("find . -name 'settings.json' -delete")
    assert named.decision == "deny" and "settings.json" in named.reason, named
    unreadable = project.bash("find . -newer README.md -delete")
    assert unreadable.decision == "deny", unreadable


# A program that binds a socket in the warm worker's folder while no worker runs would answer
# the next hook's checks: a program StateWise cannot model that names a protected path is a write.
PLANT = "import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('{sock}')\ns.listen()\n"
PLANTING = {
    "python -c": 'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind(\'{sock}\'); s.listen()"',
    "name bound once": 'python3 -c "import socket; p=\'{sock}\'; s=socket.socket(socket.AF_UNIX); s.bind(p)"',
    "path joined": 'python3 -c "import os, socket; socket.socket(socket.AF_UNIX).bind(os.path.join(\'{run}\', \'w.sock\'))"',
    "node -e": "node -e \"require('net').createServer(c => c.end()).listen('{sock}')\"",
    "perl -e": "perl -e 'use IO::Socket::UNIX; IO::Socket::UNIX->new(Local => \"{sock}\", Listen => 1)'",
    "ruby -e": "ruby -e 'require \"socket\"; UNIXServer.new(\"{sock}\")'",
    "heredoc to python": "python3 - <<'EOF'\n" + PLANT + "EOF",
    "script written and run": "cat > plant.py <<'EOF'\n" + PLANT + "EOF\npython3 plant.py",
    "script written, then run by path": "cat > plant <<'EOF'\n#!/usr/bin/env python3\n" + PLANT + "EOF\n"
                                        "chmod +x plant && ./plant",
}


@pytest.fixture(scope="module")
def guarded(project, tmp_path_factory):
    # The worker's folder named by the settings, with no worker running in it.
    run = tmp_path_factory.mktemp("run")
    run.chmod(0o700)
    return dataclasses.replace(project, env={**project.env, "STATEWISE_RUNTIME_DIR": str(run)}), run


@pytest.mark.parametrize("form", list(PLANTING))
def test_a_program_that_plants_a_fake_worker_is_denied(guarded, form):
    project, run = guarded
    answer = project.bash(PLANTING[form].format(sock=f"{run}/abc.sock", run=run))
    assert answer.decision == "deny", (form, answer)
    assert "warm worker" in answer.reason, (form, answer)
    assert not any(run.iterdir())


def test_a_workspace_script_that_plants_a_fake_worker_is_denied(guarded):
    project, run = guarded
    (project.work / "src" / "serve_guard.py").write_text(PLANT.format(sock=f"{run}/abc.sock"))
    answer = project.bash("python3 src/serve_guard.py")
    assert answer.decision == "deny" and "warm worker" in answer.reason, answer


def test_the_default_worker_folder_named_by_its_start_is_denied(project):
    # No runtime folder set: the worker's folder is /tmp/statewise-<uid>, and a program that
    # computes the rest of that name at run time still names it.
    env = {k: v for k, v in project.env.items() if k not in ("STATEWISE_RUNTIME_DIR", "XDG_RUNTIME_DIR")}
    bare = dataclasses.replace(project, env=env)
    answer = bare.bash('python3 -c "import os, socket; socket.socket(socket.AF_UNIX)'
                       ".bind(f'/tmp/statewise-{os.getuid()}/x.sock')\"")
    assert answer.decision == "deny" and "warm worker" in answer.reason, answer


def test_programs_that_write_statewises_store_or_cache_unmodelled_are_denied(project):
    cache = project.env["STATEWISE_CACHE_DIR"]
    for command in ("python3 -c \"import sqlite3; sqlite3.connect('.statewise/store.db').execute('delete from records')\"",
                    f"python3 -c \"import os; os.mkfifo('{cache}/contract-digests.json')\""):
        answer = project.bash(command)
        assert answer.decision == "deny", (command, answer)


ORDINARY_PROGRAMS = [
    "python3 -c \"print(open('.statewise/config.toml').read())\"",
    "python3 -c \"import json; print(json.load(open('.claude/settings.json'))['hooks'].keys())\"",
    "python3 -c \"from pathlib import Path; print(Path('.statewise/config.toml').read_text())\"",
    "node -e \"console.log(require('fs').readFileSync('.claude/settings.json', 'utf8'))\"",
    "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.bind('/tmp/app-test.sock')\"",
    "python3 -c \"import json; print(json.dumps({'a': 1}))\"",
    "cat > build/notes.py <<'EOF'\nprint('hello')\nEOF\npython3 build/notes.py",
]


@pytest.mark.parametrize("command", ORDINARY_PROGRAMS)
def test_ordinary_inline_programs_still_pass(guarded, command):
    project, run = guarded
    assert project.bash(command).decision not in ("deny", "ask"), command
    listing = project.bash(f"python3 -c \"import os; print(os.listdir('{run}'))\"")
    assert listing.decision not in ("deny", "ask"), listing


def test_a_stash_of_untracked_files_passes_when_statewise_and_the_hooks_are_not_among_them(tmp_path):
    project = make_project(tmp_path, protected=None)
    git(project.work, "add", ".claude", ".codex", ".gemini")
    git(project.work, "commit", "-qm", "the hooks, committed for the team")
    (project.work / "notes.txt").write_text("scratch\n")
    assert project.bash("git stash -u").decision not in ("deny", "ask")
    answer = project.bash("git stash -a")  # takes the ignored .statewise/ and .env as well
    assert answer.decision == "deny" and "stashes away" in answer.reason and ".statewise" in answer.reason, answer


def _commit_without_the_work_tree(project, branch: str, path: str, text: str) -> None:
    """A commit on ``branch`` changing ``path``, made with git's plumbing in a private index:
    the work tree (which the guard protects) is never written."""
    env = {**os.environ, "GIT_INDEX_FILE": str(project.root / "private-index"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def plumbing(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", *args], cwd=project.work, env=env, input=stdin, capture_output=True,
                              text=True, check=True, timeout=60).stdout.strip()

    blob = plumbing("hash-object", "-w", "--stdin", stdin=text)
    plumbing("read-tree", branch)
    plumbing("update-index", "--cacheinfo", f"100644,{blob},{path}")
    commit = plumbing("commit-tree", plumbing("write-tree"), "-p", branch, "-m", "tidy")
    plumbing("update-ref", f"refs/heads/{branch}", commit)


def test_git_commands_that_bring_another_version_of_the_hook_settings_are_denied(tmp_path):
    project = make_project(tmp_path, protected=None)
    git(project.work, "add", ".claude", ".codex", ".gemini")
    git(project.work, "commit", "-qm", "the hooks, committed for the team")
    git(project.work, "branch", "tidy")
    _commit_without_the_work_tree(project, "tidy", ".claude/settings.json", "{}\n")
    for command in ("git merge tidy", "git cherry-pick tidy", "git pull . tidy", "git revert HEAD",
                    "git read-tree -u --reset tidy"):
        answer = project.bash(command)
        assert answer.decision == "deny" and ".claude/settings.json" in answer.reason, (command, answer)
    for command in ("git merge feature", "git stash", "git stash pop", "git revert HEAD~1"):
        assert project.bash(command).decision not in ("deny", "ask"), command
    # settings changed and not yet committed (as `statewise install` leaves them): a stash would
    # put HEAD's version back
    settings = project.work / ".claude" / "settings.json"
    settings.write_text(settings.read_text() + "\n")
    for command in ("git stash", "git stash -u"):  # -u stashes the tracked changes too
        answer = project.bash(command)
        assert answer.decision == "deny" and "git stash HEAD changes it" in answer.reason, (command, answer)
