"""A Python program its interpreter refuses runs nothing (issue 22, real traffic), through the
installed hook.

``python -c "class A: pass; class B: pass; print(A < B)"`` does not parse: Python stops with a
SyntaxError before any of it runs, so there is nothing to check and nothing to stop. That holds
only for an interpreter whose grammar StateWise's parser has: the interpreter's version is read
from the file it resolves to (``python3.11``) or its environment's ``pyvenv.cfg``; a Python 2,
a Python newer than the one StateWise runs on, or one whose version cannot be read (a launcher
script) may accept the program, which stays "cannot check".
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from statewise.commands.python import interpreter_version, refused_by
from tests.integrations.installed import Project, make_project

UNPARSEABLE = [
    'python3 -c "class A: pass; class B: pass; print(A < B)"',
    "python -c \"try: import shutil; shutil.rmtree('migrations'); except ImportError: print('skip')\"",
    "python3 - <<'EOF'\nimport shutil\nif True shutil.rmtree('migrations')\nEOF",
]


def _interpreters(folder: Path) -> Path:
    """A folder for PATH: ``python``/``python3`` this test's interpreter (its venv's link),
    ``python2`` a file called python2.7, ``python3.99`` a Python newer than this one, and
    ``python3.10`` a launcher script (``pyshim``) whose version nothing says."""
    folder.mkdir()
    for name in ("python", "python3"):
        (folder / name).symlink_to(sys.executable)
    for real, link in (("python2.7", "python2"), ("python3.99", "python3.99"), ("pyshim", "python3.10")):
        target = folder.parent / real
        target.write_text("#!/bin/sh\nexit 0\n")
        target.chmod(0o755)
        (folder / link).symlink_to(target)
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    made = make_project(tmp_path_factory.mktemp("python-refused"), protected=[".env", "migrations"])
    folder = _interpreters(made.root / "bin")
    env = {**made.env, "PATH": f"{folder}{os.pathsep}{made.env.get('PATH', '')}"}
    return dataclasses.replace(made, env=env)


@pytest.mark.parametrize("command", UNPARSEABLE)
def test_a_program_the_interpreter_refuses_passes(project, command):
    answer = project.bash(command)
    assert answer.decision == "defer", answer.reason


def test_the_same_program_that_parses_is_still_read_and_stopped(project):
    answer = project.bash("python3 -c \"import shutil; shutil.rmtree('migrations')\"")
    assert answer.decision == "deny", answer.reason
    assert "migrations" in answer.reason


@pytest.mark.parametrize("interpreter", ["python2", "python3.99", "python3.10"])
def test_an_interpreter_of_another_or_unknown_grammar_stays_cannot_check(project, interpreter):
    answer = project.bash(f"{interpreter} -c \"print 'x'; import shutil; shutil.rmtree('migrations')\"")
    assert answer.decision == "deny", answer.reason
    assert "cannot" in answer.reason and "parse" in answer.reason, answer.reason


def test_the_version_comes_from_the_file_or_the_environment(tmp_path):
    folder = _interpreters(tmp_path / "bin")
    assert interpreter_version(str(folder / "python2")) == (2, 7)
    assert interpreter_version(str(folder / "python3.99")) == (3, 99)
    assert interpreter_version(str(folder / "python3.10")) is None
    assert interpreter_version(str(tmp_path / "missing")) is None
    venv = tmp_path / "env"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\n")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.9.18\n")
    assert interpreter_version(str(venv / "bin" / "python")) == (3, 9)


def test_the_grammar_is_the_interpreters_own():
    # `async` was a name until 3.7: a 3.6 interpreter runs this, a 3.11 one refuses it
    assert refused_by((3, 6), "async = 1") is False
    assert refused_by((3, 11), "async = 1") is True
    assert refused_by((3, 11), "print(1)") is False
    assert refused_by((2, 7), "print 'x'") is False  # Python 2 runs it
    assert refused_by(None, "class A: pass; class B: pass") is False
