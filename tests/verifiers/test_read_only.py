"""Every built-in verifier is read-only: the workspace (including .git) and the bare origin are
fingerprinted before and after each call, and any change fails the test."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from statewise.contract import builtin_contract
from statewise.scopes import TaskScope
from statewise.verifiers import VERIFIERS, ObservationStatus, install_branch_protection, verify_key
from tests.verifiers.helpers import Repo, commit, git, make_repo, observe, observe_command, private_env, shim


def fingerprint(*roots: Path) -> dict[str, tuple[object, ...]]:
    """Every directory, file and symlink under ``roots``: mode, mtime and content hash."""
    seen: dict[str, tuple[object, ...]] = {}
    for root in roots:
        for directory, dirnames, filenames in os.walk(root, followlinks=False):
            info = os.lstat(directory)
            seen[directory] = ("dir", info.st_mode, info.st_mtime_ns, tuple(sorted(dirnames + filenames)))
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(directory, d))]:
                path = os.path.join(directory, name)
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    content = os.readlink(path)
                else:
                    with open(path, "rb") as handle:
                        content = hashlib.sha256(handle.read()).hexdigest()
                seen[path] = ("entry", info.st_mode, info.st_mtime_ns, info.st_size, content)
    return seen


def _difference(before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]]) -> list[str]:
    changed = [f"changed {p}" for p in before if p in after and before[p] != after[p]]
    changed += [f"removed {p}" for p in before if p not in after]
    changed += [f"added {p}" for p in after if p not in before]
    return changed


def _build_workspace(root: Path) -> tuple[Repo, Path]:
    repo = make_repo(root)
    work = repo.work
    install_branch_protection(repo.origin, ["main", "release/*"])
    git(repo.origin, "config", "receive.denyDeletes", "true")
    git(work, "remote", "set-head", "origin", "main")
    git(work, "switch", "-q", "feature")
    commit(work, "ahead.txt", "ahead")  # feature is one ahead of origin/feature
    git(work, "switch", "-q", "main")
    # Real venv (no pip) with one distribution.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(work / ".venv")], check=True, timeout=60)
    site = work / ".venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "demo_pkg-1.0.dist-info").mkdir(parents=True)
    (site / "demo_pkg-1.0.dist-info" / "METADATA").write_text("Name: demo-pkg\nVersion: 1.0\n", encoding="utf-8")
    files = {
        "pyproject.toml": '[project]\nname = "demo"\n[tool.statewise]\ntest-command = "pytest -x"\n',
        "package.json": json.dumps({"name": "web", "scripts": {"test": "vitest"}, "engines": {"node": ">=20"}}),
        "config.yaml": "server:\n  port: 8080\n",
        "setup.cfg": "[tool:pytest]\naddopts = -x\n",
        ".env": "DEBUG=1\n",
        "Makefile": "test:\n\tpytest\n",
        "uv.lock": "",
        "tox.ini": "[tox]\nenvlist = py311\n",
    }
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")
    git(work, "add", "pyproject.toml", "package.json")
    git(work, "commit", "-q", "-m", "project files")
    # Stale index stat data: a plain `git status` would rewrite .git/index.
    (work / "README.md").write_text("hello\n", encoding="utf-8")
    (work / "build").mkdir()
    (work / "link").symlink_to(work / "build")
    shims = root / "shims"
    shim(shims, "node", 'echo "v20.1.0"')
    shim(
        shims,
        "npm",
        """case "$1" in
--version) echo "10.2.4" ;;
*) echo '{"dependencies": {"left-pad": {"version": "1.3.0"}}}' ;;
esac""",
    )
    return repo, shims


def test_every_builtin_verifier_leaves_the_workspace_and_origin_untouched(tmp_path: Path):
    repo, shims = _build_workspace(tmp_path / "sandbox")
    work = repo.work
    env = private_env(shims, VIRTUAL_ENV=str(work / ".venv"), DEPLOY_ENV="staging")
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("git.current_branch", "string", {}),
        ("git.default_branch", "string", {"remote": "origin"}),
        ("git.branch_exists", "bool", {"branch": "feature"}),
        ("git.branch_exists", "bool", {"branch": "missing"}),
        ("git.upstream", "string", {"branch": "feature"}),
        ("git.remote_url", "string", {"remote": "origin"}),
        ("git.remote_url", "string", {"remote": "nope"}),
        ("git.remotes", "list", {}),
        ("git.clean_tree", "bool", {}),
        ("git.ahead_behind", "int", {"branch": "feature"}),
        ("git.ahead_behind", "int", {"branch": "feature", "field": "behind"}),
        ("git.branch_protection", "bool", {"branch": "main"}),
        ("git.branch_protection", "bool", {"branch": "feature"}),
        ("git.protected_branches", "list", {}),
        ("python.version", "version", {}),
        ("python.venv", "path", {"field": "path"}),
        ("python.venv", "bool", {"field": "active"}),
        ("python.interpreter", "path", {}),
        ("python.package_version", "version", {"package": "demo-pkg"}),
        ("python.package_version", "version", {"package": "requests"}),
        ("node.version", "version", {}),
        ("npm.package_version", "version", {"package": "left-pad"}),
        ("fs.exists", "bool", {"path": "link"}),
        ("fs.is_dir", "bool", {"path": "build"}),
        ("fs.realpath", "path", {"path": str(work)}),
        ("fs.glob_matches", "bool", {"pattern": "*.md"}),
        ("config.value", "string", {"spec": "pyproject.toml:project.name"}),
        ("config.value", "string", {"spec": "config.yaml:server.port"}),
        ("config.value", "string", {"spec": "setup.cfg:tool:pytest.addopts"}),
        ("config.value", "string", {"spec": ".env:DEBUG"}),
        ("config.value", "string", {"spec": "package.json:engines.node"}),
        ("env.var", "string", {"name": "DEPLOY_ENV"}),
        ("path.which", "path", {"name": "node"}),
        ("project.test_command", "string", {}),
        ("project.package_manager", "string", {}),
        ("project.test_commands", "list", {}),
        ("project.protected_paths", "list", {}),
        ("project.build_dir", "path", {}),
        ("project.manifest_entry", "bool", {"kind": "npm", "name": "test"}),
        ("project.manifest_entry", "bool", {"kind": "make", "name": "test"}),
        ("git.remote_moved", "bool", {"branch": "feature"}),
    ]
    roots = (tmp_path / "sandbox",)
    before = fingerprint(*roots)
    assert any("/.git/index" in path for path in before) and any("origin.git/hooks" in path for path in before)
    exercised: set[str] = set()
    for adapter, value_type, args in calls:
        seen = observe(adapter, work, value_type=value_type, args=args, env=env)
        assert seen.status is not ObservationStatus.UNAVAILABLE, (adapter, args, seen.detail)
        assert _difference(before, fingerprint(*roots)) == [], (adapter, args)
        exercised.add(adapter)
    commands = [
        (["git", "rev-parse", "-q", "--verify", "MERGE_HEAD"], {"exit_status": {0: True, 1: False}}, "bool"),
        (["git", "status", "--porcelain"], {"regex": r"(?s)(.*)"}, "string"),
        (["npm", "--version"], {"regex": r"(\S+)"}, "version"),
        (["git", "--literal-pathspecs", "ls-files", "--error-unmatch", "--", "README.md"],
         {"exit_status": {0: True, 1: False}}, "bool"),
        (["git", "check-ignore", "-q", "--", "build"], {"exit_status": {0: True, 1: False}}, "bool"),
        (["git", "ls-remote", "--exit-code", "origin", "--", "refs/tags/v9"], {"exit_status": {0: True, 2: False}}, "bool"),
    ]
    for argv, read, value_type in commands:
        seen = observe_command(work, argv, read, value_type=value_type, env=env)
        assert seen.status is ObservationStatus.OBSERVED, (argv, seen.detail)
        assert _difference(before, fingerprint(*roots)) == [], argv
    exercised.add("command")
    builtin = {ep for ep in VERIFIERS.names() if not ep.startswith("acme.")}
    assert builtin - exercised == set(), "a built-in verifier is missing from the read-only test"

    # Every key of the coding contract, through verify_key, the way the pipeline calls them.
    contract = builtin_contract("coding")
    qualifiers = {
        "git.remote_url": "origin",
        "git.remote_has_ref": "refs/tags/v9",
        "git.branch_exists": "main",
        "python.package_version": "demo-pkg",
        "npm.package_version": "left-pad",
        "npm.script_exists": "test",
        "make.target_exists": "test",
        "just.recipe_exists": "test",
        "runtime.tool_path": "git",
        "env.var": "DEPLOY_ENV",
        "fs.exists": ".env",
        "fs.is_dir": "build",
        "fs.glob_matches": "**/*.md",
        "config.value": "pyproject.toml:project.name",
        "git.tracked": "README.md",
        "git.ignored": "build",
    }
    task = TaskScope(workspace=str(work), repo="local/sandbox/origin", branch="main")
    for key, spec in contract.state.items():
        if contract.verifier_for(key) is None:
            continue
        record_key = f"{key}[{qualifiers[key]}]" if spec.qualified else key
        seen = verify_key(contract, record_key, task, work, environ=env)
        assert seen.status is not ObservationStatus.UNAVAILABLE, (record_key, seen.detail)
        assert _difference(before, fingerprint(*roots)) == [], record_key


def test_protection_and_npm_verifiers_stay_read_only_in_their_new_cases(tmp_path: Path):
    """Foreign and declaring server hooks, garbage from git, the hosted APIs (GET only, on
    127.0.0.1) and a real npm whose HOME is inside the fingerprinted sandbox (no debug logs,
    no update-check stamp)."""
    import shutil

    from tests.verifiers.fake_hosts import api_server, github_not_protected, gitlab_protected
    from tests.verifiers.test_protection import GH006_HOOK, garbage_git

    sandbox = tmp_path / "sandbox"
    foreign = make_repo(sandbox / "foreign")
    hook = foreign.origin / "hooks" / "pre-receive"
    hook.write_text(GH006_HOOK, encoding="utf-8")
    hook.chmod(0o755)
    declared = make_repo(sandbox / "declared")
    hook = declared.origin / "hooks" / "update"
    hook.write_text("#!/bin/sh\n# statewise-protects: main\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    hosted = make_repo(sandbox / "hosted")
    git(hosted.work, "remote", "set-url", "origin", "git@github.com:acme/app.git")
    lab = make_repo(sandbox / "lab")
    git(lab.work, "remote", "set-url", "origin", "https://gitlab.com/acme/app.git")
    garbage_git(sandbox / "garbage-bin", os.urandom(512))
    home = sandbox / "home"
    home.mkdir()
    node = sandbox / "node"
    (node / "node_modules" / "left-pad").mkdir(parents=True)
    (node / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0",
                                                   "dependencies": {"left-pad": "1.3.0"}}), encoding="utf-8")
    (node / "node_modules" / "left-pad" / "package.json").write_text(
        json.dumps({"name": "left-pad", "version": "1.3.0"}), encoding="utf-8")
    routes = {
        "/repos/acme/app/branches/main/protection": github_not_protected(),
        "/repos/acme/app/rules/branches/main?per_page=100&page=1": (200, []),
        "/repos/acme/app/branches?protected=true&per_page=100&page=1": (200, []),
        "/projects/acme%2Fapp/protected_branches?per_page=100&page=1": (200, [gitlab_protected("main")]),
    }
    with api_server(routes) as server:
        env = private_env(STATEWISE_GITHUB_API_URL=server.url, STATEWISE_GITLAB_API_URL=server.url,
                          HOME=str(home))
        for name in ("GH_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN", "GL_TOKEN"):
            env.pop(name, None)
        calls = [
            (foreign.work, "git.branch_protection", "bool", {"branch": "main"}, env, ObservationStatus.UNAVAILABLE),
            (foreign.work, "git.protected_branches", "list", {}, env, ObservationStatus.UNAVAILABLE),
            (declared.work, "git.branch_protection", "bool", {"branch": "main"}, env, ObservationStatus.OBSERVED),
            (declared.work, "git.protected_branches", "list", {}, env, ObservationStatus.OBSERVED),
            (hosted.work, "git.branch_protection", "bool", {"branch": "main", "use_gh": False}, env,
             ObservationStatus.OBSERVED),
            (hosted.work, "git.protected_branches", "list", {"use_gh": False}, env, ObservationStatus.OBSERVED),
            (lab.work, "git.branch_protection", "bool", {"branch": "main"}, env, ObservationStatus.OBSERVED),
            (declared.work, "git.branch_protection", "bool", {"branch": "main"},
             private_env(sandbox / "garbage-bin"), ObservationStatus.UNAVAILABLE),
        ]
        if shutil.which("npm"):
            calls.append((node, "npm.package_version", "version", {"package": "left-pad"}, env,
                          ObservationStatus.OBSERVED))
        before = fingerprint(sandbox)
        for work, adapter, value_type, args, agent_env, expected in calls:
            seen = observe(adapter, work, value_type=value_type, args=args, env=agent_env, timeout=20)
            assert seen.status is expected, (adapter, work, seen.detail)
            assert _difference(before, fingerprint(sandbox)) == [], (adapter, work)
        assert server.seen, "the hosted APIs were asked"
