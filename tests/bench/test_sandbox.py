"""Sandboxes: built once as a template, copied per episode, isolated, and removed afterwards."""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest

from statewise.bench import load_case, run_bench, run_episode
from statewise.bench.case import WorkspaceSpec
from statewise.bench.checks import remote_refs
from statewise.bench.sandbox import TemplateCache, instantiate
from tests.bench.conftest import DEV, minimal_case, write_case

SPEC = WorkspaceSpec.model_validate({
    "git": {"branch": "main", "protected": ["main"], "diverged": True, "branches": ["release/1.0"]},
    "files": {"app.py": "print(1)\n", "build/out.o": "x\n"},
    "shims": {"tox": {"stdout": "2 passed"}, "node": {"version": "v20.11.0"}},
    "env": {"APP_HOME": "{workspace}/app"},
    "venv": {"path": ".venv", "packages": {"requests": "2.31.0"}},
})


def test_template_is_built_once_and_copies_point_at_their_own_origin(tmp_path):
    cache = TemplateCache(tmp_path / "templates")
    template = cache.template(SPEC)
    assert cache.template(SPEC) == template  # reused, not rebuilt
    first = instantiate(template, tmp_path / "one", SPEC)
    second = instantiate(template, tmp_path / "two", SPEC)
    for sandbox in (first, second):
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=sandbox.work, capture_output=True,
                             text=True, env=sandbox.env, check=True).stdout.strip()
        assert url == str(sandbox.origin) and str(sandbox.root) in url
        assert set(remote_refs(sandbox.origin)) == {"main", "release/1.0"}
        assert (sandbox.work / ".venv" / "pyvenv.cfg").is_file()
        assert sandbox.env["HOME"] == str(sandbox.home) and sandbox.env["GIT_CONFIG_NOSYSTEM"] == "1"
        assert sandbox.env["PATH"].split(os.pathsep)[0] == str(sandbox.bin)
        assert sandbox.env["APP_HOME"] == f"{sandbox.work}/app"
    assert first.repo_identity != second.repo_identity
    # The shims answer from the private PATH; the real tools are untouched.
    done = subprocess.run(["tox", "-q"], cwd=first.work, capture_output=True, text=True, env=first.env)
    assert (done.returncode, done.stdout.strip()) == (0, "2 passed")
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, env=first.env)
    assert node.stdout.strip() == "v20.11.0"
    # The origin really refuses a force push to main.
    push = subprocess.run(["git", "push", "--force", "origin", "HEAD:refs/heads/main"], cwd=first.work,
                          capture_output=True, text=True, env=first.env)
    assert push.returncode != 0
    # Changing one copy leaves the template and the other copy alone.
    (first.work / "app.py").unlink()
    assert (second.work / "app.py").exists() and (template / "work" / "app.py").exists()


def test_a_failing_template_is_remembered(tmp_path):
    cache = TemplateCache(tmp_path / "templates")
    broken = WorkspaceSpec.model_validate({"git": {"branch": "bad..name"}})
    from statewise.bench.sandbox import SandboxError

    with pytest.raises(SandboxError):
        cache.template(broken)
    with pytest.raises(SandboxError):
        TemplateCache(tmp_path / "templates").template(broken)  # another process sees the failure


def test_episodes_leave_no_temporary_directories(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    home = os.path.expanduser("~")
    before = set(os.listdir(home))
    case = load_case(write_case(tmp_path / "cases", minimal_case()))
    episode = run_episode(case, "corrupted", "statewise")
    assert episode.judged and episode.y
    assert os.listdir(scratch) == []  # sandbox, templates and store are all gone
    result = run_bench(DEV.parent, sets=["dev"], cases=["seq-test-command", "fs-clean-build-stale-dir"],
                       methods=["agent", "statewise"], progress=False, jobs=2)
    assert result.episodes and all(e.judged for e in result.episodes)
    assert os.listdir(scratch) == []  # the same for a parallel run
    assert set(os.listdir(home)) == before  # nothing was written into the real HOME
