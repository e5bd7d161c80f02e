"""Python and Node adapters: a real (pip-less) venv, and tool shims on a private PATH."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewise.verifiers import ObservationStatus
from tests.verifiers.helpers import observe, private_env, shim

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE
THIS_PYTHON = "{}.{}.{}".format(*sys.version_info[:3])


@pytest.fixture(scope="module")
def venv_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with a real virtual environment (no pip: about a second) and one fake distribution."""
    workspace = tmp_path_factory.mktemp("venv-ws")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(workspace / ".venv")], check=True, timeout=60)
    site = workspace / ".venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    dist = site / "demo_pkg-1.2.3.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.2.3\n", encoding="utf-8")
    # The project's own metadata in the workspace root must not count as installed.
    egg = workspace / "rootpkg.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: rootpkg\nVersion: 9.9\n", encoding="utf-8")
    return workspace


def test_python_version_uses_the_workspace_venv(venv_workspace: Path, tmp_path: Path):
    # A python3 shim first on PATH must not win over the venv.
    shims = tmp_path / "bin"
    shim(shims, "python3", 'echo "Python 2.0.1"')
    env = private_env(shims)
    seen = observe("python.version", venv_workspace, value_type="version", env=env)
    assert seen.status is OBSERVED
    assert seen.value == THIS_PYTHON
    assert ".venv/bin/python" in seen.reference


def test_python_interpreter_and_venv(venv_workspace: Path):
    venv = venv_workspace / ".venv"
    env = private_env()
    interpreter = observe("python.interpreter", venv_workspace, value_type="path", env=env)
    assert interpreter.status is OBSERVED
    assert interpreter.value == str(venv / "bin" / "python")
    assert observe("python.venv", venv_workspace, value_type="path", args={"field": "path"}).value == str(venv)
    inactive = observe("python.venv", venv_workspace, value_type="bool", args={"field": "active"}, env=env)
    assert inactive.value is False
    active_env = private_env(VIRTUAL_ENV=str(venv))
    active = observe("python.venv", venv_workspace, value_type="bool", args={"field": "active"}, env=active_env)
    assert active.value is True


def test_package_version_asks_the_workspace_interpreter(venv_workspace: Path):
    seen = observe("python.package_version", venv_workspace, value_type="version", args={"package": "demo-pkg"})
    assert seen.status is OBSERVED
    assert seen.value == "1.2.3"
    # The name arrives as argv[1] of a fixed -c program.
    assert seen.reference.endswith(" demo-pkg")
    missing = observe("python.package_version", venv_workspace, value_type="version", args={"package": "requests"})
    assert missing.status is ABSENT
    assert "not installed" in missing.detail
    root_metadata = observe("python.package_version", venv_workspace, value_type="version", args={"package": "rootpkg"})
    assert root_metadata.status is ABSENT
    bad = observe(
        "python.package_version", venv_workspace, value_type="version", args={"package": "x'); import os; ('"}
    )
    assert bad.status is UNAVAILABLE
    assert "not a valid distribution name" in bad.detail


def test_python_without_venv_uses_python3_on_path(tmp_path: Path):
    shims = tmp_path / "bin"
    shim(shims, "python3", 'echo "Python 3.9.18"')
    env = private_env(shims, keep_system_path=False)
    seen = observe("python.version", tmp_path, value_type="version", env=env)
    assert seen.status is OBSERVED
    assert seen.value == "3.9.18"
    assert seen.reference == f"{shims / 'python3'} --version"
    shim(shims, "python3", 'echo "Python 2.7.18" >&2')  # Python 2 printed its version on stderr
    assert observe("python.version", tmp_path, value_type="version", env=env).value == "2.7.18"


def test_python_version_absent_and_unavailable(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = observe("python.version", tmp_path, value_type="version", env=private_env(empty, keep_system_path=False))
    assert nothing.status is ABSENT
    shims = tmp_path / "bin"
    env = private_env(shims, keep_system_path=False)
    shim(shims, "python3", 'echo "pyenv: python3: command not found" >&2; exit 127')
    assert observe("python.version", tmp_path, value_type="version", env=env).status is UNAVAILABLE
    shim(shims, "python3", "echo garbage")
    garbled = observe("python.version", tmp_path, value_type="version", env=env)
    assert garbled.status is UNAVAILABLE
    assert "printed no version" in garbled.detail
    named = observe("python.version", tmp_path, value_type="version", args={"interpreter": "bin/python3.99"})
    assert named.status is ABSENT


def test_a_hanging_interpreter_is_unavailable_within_the_timeout(tmp_path: Path):
    shims = tmp_path / "bin"
    # The shim's child (sleep) holds the output pipe: the whole process group must be killed.
    shim(shims, "python3", "sleep 30")
    started = time.monotonic()
    seen = observe("python.version", tmp_path, value_type="version", env=private_env(shims), timeout=0.5)
    elapsed = time.monotonic() - started
    assert seen.status is UNAVAILABLE
    assert "did not finish within 0.5s" in seen.detail
    assert elapsed < 2.0


def test_broken_venv_is_unavailable(tmp_path: Path):
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /nowhere\n", encoding="utf-8")
    seen = observe("python.version", tmp_path, value_type="version")
    assert seen.status is UNAVAILABLE
    assert "no executable bin/python" in seen.detail


def test_python_version_of_the_wrong_type_is_unavailable(tmp_path: Path):
    shims = tmp_path / "bin"
    shim(shims, "python3", 'echo "Python 3.9.18"')
    seen = observe("python.version", tmp_path, value_type="int", env=private_env(shims))
    assert seen.status is UNAVAILABLE
    assert "wrong type" in seen.detail


def test_node_version_drops_the_v(tmp_path: Path):
    shims = tmp_path / "bin"
    shim(shims, "node", 'echo "v20.1.0"')
    seen = observe("node.version", tmp_path, value_type="version", env=private_env(shims))
    assert seen.status is OBSERVED
    assert seen.value == "20.1.0"
    assert seen.reference == f"{shims / 'node'} --version"


def test_node_absent_garbled_and_hanging(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (
        observe("node.version", tmp_path, value_type="version", env=private_env(empty, keep_system_path=False)).status
        is ABSENT
    )
    shims = tmp_path / "bin"
    shim(shims, "node", "echo 'not a version'")
    assert observe("node.version", tmp_path, value_type="version", env=private_env(shims)).status is UNAVAILABLE
    shim(shims, "node", "sleep 30")
    started = time.monotonic()
    hung = observe("node.version", tmp_path, value_type="version", env=private_env(shims), timeout=0.3)
    assert hung.status is UNAVAILABLE
    assert time.monotonic() - started < 2.0
