"""Qualifiers and values never become options (issue 11, defect 8).

``npm.package_version[--logs-dir=DIR]`` once made the npm verifier run ``npm ls
--logs-dir=DIR ...``, and npm wrote ``DIR/*-debug-0.log``. These tests use the real npm
(skipped where none is installed) and real git, and prove DIR stays empty."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from statewise.contract import VerifierSpec, builtin_contract, load_contract
from statewise.scopes import TaskScope
from statewise.verifiers import ObservationStatus, fill_placeholders, verify_key
from statewise.verifiers.node import check_npm_package_name
from statewise.verifiers.runner import UnsafeValueError
from tests.verifiers.helpers import git, observe, observe_command, private_env

UNAVAILABLE = ObservationStatus.UNAVAILABLE
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


@pytest.fixture
def node_project(tmp_path: Path) -> Path:
    project = tmp_path / "web"
    (project / "node_modules" / "left-pad").mkdir(parents=True)
    (project / "package.json").write_text(
        json.dumps({"name": "web", "version": "1.0.0", "dependencies": {"left-pad": "1.3.0"}}), encoding="utf-8")
    (project / "node_modules" / "left-pad" / "package.json").write_text(
        json.dumps({"name": "left-pad", "version": "1.3.0"}), encoding="utf-8")
    return project


def npm_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return private_env(HOME=str(home))


@needs_npm
def test_the_npm_verifier_reads_a_real_installed_package(node_project: Path, tmp_path: Path):
    contract = builtin_contract("coding")
    task = TaskScope(workspace=str(node_project))
    env = npm_env(tmp_path)
    seen = verify_key(contract, "npm.package_version[left-pad]", task, node_project, environ=env)
    assert seen.status is ObservationStatus.OBSERVED and seen.value == "1.3.0"
    assert "--" in seen.reference.split()  # the name comes after --
    missing = verify_key(contract, "npm.package_version[is-odd]", task, node_project, environ=env)
    assert missing.status is ObservationStatus.ABSENT
    assert list((tmp_path / "home").iterdir()) == []  # no ~/.npm, no logs


@needs_npm
@pytest.mark.parametrize("qualifier",
                         ["--logs-dir={dir}", "--logs-dir", "-ddd", "--cache={dir}", "@x/--logs-dir={dir}"])
def test_an_option_looking_qualifier_never_reaches_npm(node_project: Path, tmp_path: Path, qualifier: str):
    target = tmp_path / "DIR"
    target.mkdir()
    key = f"npm.package_version[{qualifier.format(dir=target)}]"
    seen = verify_key(builtin_contract("coding"), key, TaskScope(workspace=str(node_project)), node_project,
                      environ=npm_env(tmp_path))
    assert seen.status is UNAVAILABLE
    assert "not a valid npm package name" in seen.detail
    assert list(target.iterdir()) == []


@needs_npm
def test_statewise_verify_refuses_the_injected_qualifier(node_project: Path, tmp_path: Path):
    target = tmp_path / "DIR"
    target.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "statewise.cli", "--store", str(tmp_path / "store.db"), "verify",
         f"npm.package_version[--logs-dir={target}]", "--cwd", str(node_project)],
        capture_output=True, text=True, timeout=120, env=npm_env(tmp_path), stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not a valid npm package name" in done.stdout
    assert list(target.iterdir()) == []


@needs_npm
def test_the_option_is_not_read_even_by_npm_itself_after_the_double_dash(node_project: Path, tmp_path: Path):
    # Belt and braces: were a name to slip through validation, `--` still makes it a value.
    target = tmp_path / "DIR"
    target.mkdir()
    done = subprocess.run(["npm", "ls", "--depth=0", "--json", "--", f"--logs-dir={target}"], cwd=node_project,
                          capture_output=True, text=True, timeout=60, env=npm_env(tmp_path))
    assert done.returncode != 0 or "dependencies" not in json.loads(done.stdout)
    assert list(target.iterdir()) == []


def test_npm_package_names_are_typed():
    for good in ("left-pad", "@types/node", "lodash.merge", "a_b", "~x"):
        assert check_npm_package_name(good) == good
    for bad in ("--logs-dir=/tmp/x", "-x", ".hidden", "_private", "Upper", "a b", "@scope/", "a/b/c", "x" * 215,
                "", "a\nb", "../etc"):
        with pytest.raises(ValueError):
            check_npm_package_name(bad)


# --- the generic command adapter: no placeholder value turns into an option ----------------------


def test_command_bindings_refuse_option_values_and_control_characters(tmp_path: Path):
    spec = VerifierSpec.model_validate(
        {"adapter": "command", "argv": ["git", "ls-remote", "{qualifier}"], "read": {"regex": "(.*)"}})
    marker = tmp_path / "written"
    for qualifier in (f"--upload-pack=touch {marker}", "-h", "main\nx", "a\x00b"):
        with pytest.raises(UnsafeValueError):
            fill_placeholders(spec, workspace=tmp_path, branch=None, repo=None, user=None, qualifier=qualifier)
    assert not marker.exists()
    # A template that writes an option itself stays allowed; so do ordinary values.
    git(tmp_path, "init", "-q", str(tmp_path / "r"))
    fine = observe_command(tmp_path / "r", ["git", "rev-parse", "--is-inside-work-tree={qualifier}"],
                           {"regex": "(.*)"}, value_type="string", qualifier="x")
    assert "refused" not in fine.detail
    assert fill_placeholders(spec, workspace=tmp_path, branch=None, repo=None, user=None,
                             qualifier="origin")["argv"] == ["git", "ls-remote", "origin"]


def test_an_extension_contract_command_with_a_qualifier_is_guarded(tmp_path: Path):
    contract_file = tmp_path / "ext.yaml"
    contract_file.write_text(
        """name: ext
version: 1
extends: coding
state:
  git.tag_exists:
    type: bool
    scope: workspace
    authority: machine
    qualified: true
    verifier:
      adapter: command
      argv: [git, rev-parse, -q, --verify, "{qualifier}"]
      read:
        exit_status: {0: true, 1: false}
""",
        encoding="utf-8",
    )
    contract = load_contract(str(contract_file))
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    task = TaskScope(workspace=str(repo))
    out = tmp_path / "out.txt"
    seen = verify_key(contract, f"git.tag_exists[--output={out}]", task, repo)
    assert seen.status is UNAVAILABLE and "would be read as an option" in seen.detail
    assert not out.exists()


# --- adapters that take names from qualifiers validate them ----------------------------------------


@pytest.mark.parametrize(
    ("adapter", "value_type", "args"),
    [
        ("git.remote_url", "string", {"remote": "--upload-pack=x"}),
        ("git.branch_exists", "bool", {"branch": "--orphan"}),
        ("git.upstream", "string", {"branch": "-D"}),
        ("git.ahead_behind", "int", {"branch": "main", "upstream": "--output=x"}),
        ("git.branch_protection", "bool", {"branch": "--force", "remote": "origin"}),
        ("git.default_branch", "string", {"remote": "--exec=x"}),
        ("python.package_version", "version", {"package": "--index-url=x"}),
        ("env.var", "string", {"name": "-x"}),
        ("path.which", "path", {"name": "../x"}),
        ("fs.exists", "bool", {"path": "/etc/passwd"}),
        ("npm.package_version", "version", {"package": "--logs-dir=x"}),
    ],
)
def test_every_adapter_validates_names_before_they_reach_an_argv(repo, adapter, value_type, args):
    seen = observe(adapter, repo.work, value_type=value_type, args=args)
    assert seen.status is UNAVAILABLE, seen.detail


@needs_npm
def test_the_mcp_verify_tool_refuses_the_injected_qualifier(node_project: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch):
    import anyio
    from mcp import Client

    from statewise.integrations.mcp_server import build_server

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    target = tmp_path / "DIR"
    target.mkdir()
    server = build_server(store_location=str(tmp_path / "store.db"), workspace=str(node_project))

    async def ask() -> dict:
        async with Client(server, raise_exceptions=True) as client:
            result = await client.call_tool("verify", {"key": f"npm.package_version[--logs-dir={target}]"})
            assert not result.is_error, result.content[0].text
            return result.structured_content

    try:
        answer = anyio.run(ask)
    finally:
        server.statewise.close()
    assert answer["observed"] is None and answer["status"] == "unresolved"
    assert "not a valid npm package name" in answer["missing"]
    assert list(target.iterdir()) == []


def test_a_qualifier_cannot_move_a_command_out_of_the_workspace(tmp_path: Path):
    spec = VerifierSpec.model_validate({"adapter": "command", "argv": ["git", "status"],
                                        "cwd": "{workspace}/{qualifier}", "read": {"regex": "(.*)"}})
    workspace = tmp_path / "ws"
    filled = fill_placeholders(spec, workspace=workspace, branch=None, repo=None, user=None, qualifier="frontend")
    assert filled["cwd"] == f"{workspace}/frontend"
    for qualifier in ("../..", "a/../../x", "x\ny"):
        with pytest.raises(UnsafeValueError):
            fill_placeholders(spec, workspace=workspace, branch=None, repo=None, user=None, qualifier=qualifier)
