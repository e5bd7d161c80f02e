"""Garbage is never a value (issue 11, defect 7, as a class).

Each tool a verifier reads from is replaced, on the agent's PATH, by a real program that
prints garbage -- random bytes, text with control characters, or nothing -- and exits 0.
Every verifier that reads a value from that output must answer UNAVAILABLE, never a value
(least of all "no"). Verifiers that read only an exit status are not in this list: a tool
that lies with its exit status cannot be told from one that tells the truth."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from statewise.verifiers import ObservationStatus
from tests.verifiers.helpers import Repo, observe, observe_command, private_env, write_exe

GARBAGE = {
    "random": os.urandom(2048),
    "control": b"\x1b[2J\x00\x01main\x07\n",
    "empty": b"",
}


def liar(directory: Path, name: str, payload: bytes) -> Path:
    """A program ``name`` that prints ``payload`` on stdout and stderr for any arguments, exit 0."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.payload").write_bytes(payload)
    return write_exe(directory / name, f'#!/bin/sh\ncat "{directory / name}.payload"\n'
                                       f'cat "{directory / name}.payload" >&2\nexit 0\n')


GIT_ADAPTERS = [
    ("git.current_branch", "string", {}),
    ("git.default_branch", "string", {"remote": "origin"}),
    ("git.upstream", "string", {"branch": "feature"}),
    ("git.remote_url", "string", {"remote": "origin"}),
    ("git.ahead_behind", "int", {"branch": "feature"}),
    ("git.branch_protection", "bool", {"branch": "main"}),
    ("git.branch_protection", "bool", {}),
    ("git.protected_branches", "list", {}),
]


@pytest.mark.parametrize("garbage", list(GARBAGE))
@pytest.mark.parametrize(("adapter", "value_type", "args"), GIT_ADAPTERS,
                         ids=[f"{a}{sorted(g)}" for a, _, g in GIT_ADAPTERS])
def test_git_verifiers_never_read_garbage_as_a_value(repo: Repo, tmp_path: Path, garbage, adapter, value_type, args):
    liar(tmp_path / "bin", "git", GARBAGE[garbage])
    seen = observe(adapter, repo.work, value_type=value_type, args=args, env=private_env(tmp_path / "bin"))
    assert seen.status is not ObservationStatus.OBSERVED, (adapter, garbage, seen.value, seen.detail)


@pytest.mark.parametrize("garbage", ["random", "control"])
@pytest.mark.parametrize(("adapter", "value_type"), [("git.remotes", "list"), ("git.clean_tree", "bool")])
def test_listings_that_are_garbage_are_unavailable(repo: Repo, tmp_path: Path, garbage, adapter, value_type):
    # For these two, empty output is git's documented answer (no remotes, a clean tree).
    liar(tmp_path / "bin", "git", GARBAGE[garbage])
    seen = observe(adapter, repo.work, value_type=value_type, env=private_env(tmp_path / "bin"))
    assert seen.status is ObservationStatus.UNAVAILABLE, (adapter, seen.value, seen.detail)


@pytest.mark.parametrize("garbage", list(GARBAGE))
@pytest.mark.parametrize(
    ("program", "adapter", "value_type", "args"),
    [
        ("python3", "python.version", "version", {}),
        ("python3", "python.interpreter", "path", {}),
        ("python3", "python.package_version", "version", {"package": "requests"}),
        ("node", "node.version", "version", {}),
        ("npm", "npm.package_version", "version", {"package": "left-pad"}),
    ],
)
def test_runtime_verifiers_never_read_garbage_as_a_value(tmp_path: Path, garbage, program, adapter, value_type, args):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    liar(tmp_path / "bin", program, GARBAGE[garbage])
    seen = observe(adapter, workspace, value_type=value_type, args=args,
                   env=private_env(tmp_path / "bin", keep_system_path=False))
    assert seen.status is ObservationStatus.UNAVAILABLE, (adapter, garbage, seen.value, seen.detail)


@pytest.mark.parametrize("garbage", list(GARBAGE))
def test_the_command_adapter_never_reads_garbage_as_a_value(tmp_path: Path, garbage):
    liar(tmp_path / "bin", "tool", GARBAGE[garbage])
    env = private_env(tmp_path / "bin")
    for stream in ("stdout", "stderr"):
        seen = observe_command(tmp_path, ["tool", "--version"], {"regex": r"(?s)(.*)"}, value_type="string",
                               env=env, stream=stream)
        assert seen.status is ObservationStatus.UNAVAILABLE, (stream, seen.value, seen.detail)
        listed = observe_command(tmp_path, ["tool"], {"json_path": "$.version"}, value_type="string", env=env,
                                 stream=stream)
        assert listed.status is ObservationStatus.UNAVAILABLE


@pytest.mark.parametrize("name", ["pyproject.toml", "package.json", "tox.ini"])
def test_project_files_that_are_not_text_are_unavailable(tmp_path: Path, name: str):
    (tmp_path / name).write_bytes(b"\xff\xfe" + os.urandom(256))
    for adapter in ("project.test_command", "project.package_manager"):
        seen = observe(adapter, tmp_path, value_type="string")
        if name == "tox.ini" and adapter == "project.package_manager":
            continue  # the package manager never reads tox.ini
        assert seen.status is ObservationStatus.UNAVAILABLE, (adapter, name, seen.value, seen.detail)


def test_a_config_file_that_is_not_text_is_unavailable(tmp_path: Path):
    (tmp_path / "config.yaml").write_bytes(os.urandom(512) + b"\xff")
    seen = observe("config.value", tmp_path, value_type="string", args={"spec": "config.yaml:a.b"})
    assert seen.status is ObservationStatus.UNAVAILABLE
