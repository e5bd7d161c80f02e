"""The repository carries nothing of one machine (issue 28 item 4): no tracked symlink points
outside it (a `.venv-main` symlink to a developer's absolute path once dangled everywhere else),
and no tracked file holds the absolute path of the checkout the tests run in, which is where a
machine's own path lands when a generated file (settings with absolute commands, a report) is
committed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except OSError as error:
        pytest.skip(f"git cannot run here: {error}")
    if done.returncode == 128:
        pytest.skip(f"{ROOT} is not a git checkout (an unpacked archive): nothing is tracked")
    return done.stdout


def test_no_tracked_symlink_points_outside_the_repository():
    links = [line.split("\t", 1)[1] for line in _git("ls-files", "-s").splitlines() if line.startswith("120000 ")]
    outside = []
    for name in links:
        path = ROOT / name
        target = os.readlink(path) if path.is_symlink() else _git("show", f"HEAD:{name}")
        resolved = (path.parent / target).resolve()
        if os.path.isabs(target) or not resolved.is_relative_to(ROOT):
            outside.append(f"{name} -> {target}")
    assert outside == []


def test_no_tracked_file_holds_the_checkouts_absolute_path():
    # `git grep` reads the tracked files only (-I: text files): fast on the whole repository.
    found = _git("grep", "-I", "-n", "-F", "-e", str(ROOT) + "/")
    assert found == ""
