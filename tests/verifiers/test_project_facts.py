"""Facts established from the project's own files: test commands, package managers, protected
paths; whether a remote branch moved; what interpreter a shimmed pip runs in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from statewise.verifiers.base import ObservationStatus
from statewise.verifiers.python import interpreter_of_executable, resolve_shim
from tests.verifiers.helpers import observe as _observe

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}


def observe(adapter: str, workspace: Path, value_type: str, **args: object):
    choices = ("pip", "uv", "poetry", "pdm", "npm", "pnpm", "yarn", "bun") if value_type == "enum" else None
    return _observe(adapter, workspace, value_type=value_type, args=args, choices=choices, env=dict(os.environ))


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=GIT_ENV).stdout


# --- project.test_commands ------------------------------------------------------------------


def test_every_declared_test_command_is_listed_with_its_source(tmp_path):
    write(tmp_path, {
        "package.json": json.dumps({"scripts": {"test": "vitest run", "test:e2e": "playwright test", "build": "x"}}),
        "Makefile": "build:\n\tcc x.c\n\ntest check: build\n\t./run\n",
        "justfile": "fmt:\n    echo\n\ntests:\n    make test\n",
        "tox.ini": "[tox]\nenvlist = py311\n",
        "noxfile.py": "import nox\n",
        "Cargo.toml": "[package]\nname = 'x'\n",
        "go.mod": "module x\n",
        "pyproject.toml": "[tool.statewise]\ntest-command = ['pytest', '-q', 'tests']\n",
    })
    seen = observe("project.test_commands", tmp_path, "list")
    assert seen.status is OBSERVED
    commands = seen.value
    assert commands[0] == "pytest -q tests"  # the developer's own declaration comes first
    for expected in ("tox", "nox", "npm test", "npm run test", "pnpm test", "yarn test", "bun run test",
                     "npm run test:e2e", "vitest", "playwright", "make", "just", "pytest", "cargo test", "go test"):
        assert expected in commands, expected
    assert "bun test" not in commands  # no bun lock or bunfig: bun's own runner is not declared
    assert "npm run build" not in commands
    for source in ("package.json", "Makefile", "justfile", "tox", "noxfile.py", "Cargo.toml", "go.mod"):
        assert source in seen.detail


def test_npm_placeholder_script_and_plain_directories_declare_nothing(tmp_path):
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}),
                     "README.md": "# x\n", "Makefile": "build:\n\tcc x.c\n"})
    seen = observe("project.test_commands", tmp_path, "list")
    assert seen.status is ABSENT and "declares no test command" in seen.detail


def test_a_python_project_without_configuration_declares_pytest(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    seen = observe("project.test_commands", tmp_path, "list")
    assert seen.status is OBSERVED and "pytest" in seen.value and "unittest" in seen.value


def test_an_unparseable_project_file_is_unavailable_not_absent(tmp_path):
    write(tmp_path, {"package.json": "{not json", "Cargo.toml": "[package]\n"})
    seen = observe("project.test_commands", tmp_path, "list")
    assert seen.status is UNAVAILABLE and "package.json" in seen.detail


def test_reading_the_test_commands_takes_a_few_milliseconds(tmp_path):
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": "jest"}}), "pyproject.toml": "[project]\n",
                     "tox.ini": "[tox]\n", "Makefile": "test:\n\ttrue\n"})
    observe("project.test_commands", tmp_path, "list")  # warm the imports
    started = time.perf_counter()
    for _ in range(20):
        assert observe("project.test_commands", tmp_path, "list").status is OBSERVED
    assert (time.perf_counter() - started) / 20 < 0.05  # measured ~1 ms; generous for a loaded CI machine


# --- project.package_manager ------------------------------------------------------------------


@pytest.mark.parametrize(("files", "expected"), [
    ({"pyproject.toml": "[project]\nname = 'x'\n", "uv.lock": "version = 1\n"}, "uv"),
    ({"pyproject.toml": "[project]\nname = 'x'\n\n[tool.uv]\ndev-dependencies = []\n"}, "uv"),
    ({"pyproject.toml": "[project]\nname = 'x'\n\n[tool.pdm]\n"}, "pdm"),
    ({"pyproject.toml": "[project]\nname = 'x'\n", "pdm.lock": ""}, "pdm"),
    ({"package.json": "{}", "bun.lockb": "x"}, "bun"),
    ({"package.json": json.dumps({"packageManager": "bun@1.1.0"})}, "bun"),
])
def test_package_manager_from_lock_files_and_tool_tables(tmp_path, files, expected):
    write(tmp_path, files)
    seen = observe("project.package_manager", tmp_path, "enum")
    assert (seen.status, seen.value) == (OBSERVED, expected), seen.detail


def test_a_uv_init_project_names_no_package_manager(tmp_path):
    # What `uv init` writes: a PEP 621 pyproject.toml that pip, uv, pdm and poetry all read.
    write(tmp_path, {"pyproject.toml": "[project]\nname = \"notes\"\nversion = \"0.1.0\"\ndependencies = []\n",
                     ".python-version": "3.11\n", "main.py": "print(1)\n"})
    seen = observe("project.package_manager", tmp_path, "enum")
    assert seen.status is ABSENT


# --- fs.declared_protected_paths ---------------------------------------------------------------


def test_protected_paths_file_lists_paths_and_an_absent_file_is_absent(tmp_path):
    assert observe("project.protected_paths", tmp_path, "list").status is ABSENT
    write(tmp_path, {".statewise/protected": "# never delete\n\ndata/\n.env\n  migrations  \n"})
    seen = observe("project.protected_paths", tmp_path, "list")
    assert (seen.status, seen.value) == (OBSERVED, ["data", ".env", "migrations"])
    write(tmp_path, {".statewise/protected": "# nothing is protected here\n"})
    assert observe("project.protected_paths", tmp_path, "list").value == []  # an explicit "none"


# --- git.remote_moved ---------------------------------------------------------------------------


@pytest.fixture
def pushed(tmp_path):
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "a.txt").write_text("a\n")
    git(work, "add", "a.txt")
    git(work, "commit", "-qm", "a")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "-u", "origin", "main")
    git(work, "switch", "-qc", "feature")
    return tmp_path, origin, work


def test_remote_moved_sees_a_teammates_push_the_clone_never_fetched(pushed):
    root, origin, work = pushed
    assert observe("git.remote_moved", work, "bool", branch="feature").value is False  # never pushed
    git(work, "push", "-q", "-u", "origin", "feature")
    assert observe("git.remote_moved", work, "bool", branch="feature").value is False
    git(root, "clone", "-q", "-b", "feature", str(origin), str(root / "mate"))
    (root / "mate" / "b.txt").write_text("b\n")
    git(root / "mate", "add", "b.txt")
    git(root / "mate", "commit", "-qm", "b")
    git(root / "mate", "push", "-q", "origin", "feature")
    refs_before = git(work, "for-each-ref")
    seen = observe("git.remote_moved", work, "bool", branch="feature")
    assert (seen.status, seen.value) == (OBSERVED, True) and "last saw" in seen.detail
    assert git(work, "for-each-ref") == refs_before  # ls-remote fetched nothing
    git(work, "fetch", "-q")
    assert observe("git.remote_moved", work, "bool", branch="feature").value is False


def test_remote_moved_is_unavailable_when_the_remote_cannot_be_asked(pushed):
    _, origin, work = pushed
    shutil.rmtree(origin)
    seen = observe("git.remote_moved", work, "bool", branch="main")
    assert seen.status is UNAVAILABLE and "could not ask origin" in seen.detail


# --- shims -------------------------------------------------------------------------------------


def test_a_plain_script_and_a_venv_are_not_shims(tmp_path):
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True)
    script = tmp_path / "v" / "bin" / "tool"
    script.write_text(f"#!{tmp_path / 'v' / 'bin' / 'python'}\nprint(1)\n")
    env = {"PATH": "/usr/bin:/bin"}
    assert resolve_shim(str(script), env, tmp_path) == (None, "")
    found, how = interpreter_of_executable(str(script), env, tmp_path)
    assert found == str(tmp_path / "v" / "bin" / "python") and "virtual environment" in how


def test_a_pyenv_shim_is_resolved_to_the_interpreter_it_selects_not_to_bash(tmp_path):
    shim = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "shims" / "pip"
    if not shim.is_file():
        pytest.skip("pyenv is not installed here")
    env = {"PATH": f"{shim.parent}:/usr/bin:/bin", "HOME": str(Path.home())}
    real, how = resolve_shim(str(shim), env, tmp_path)
    assert real is not None and "/versions/" in real and "pyenv shim" in how
    interpreter, _ = interpreter_of_executable(str(shim), env, tmp_path)
    assert interpreter is not None and "/versions/" in interpreter
    assert os.path.basename(interpreter).startswith("python") and "bash" not in interpreter


# --- npm scripts, make targets, just recipes (project.manifest_entry) --------------------------


def _entry(workspace: Path, key: str):
    from statewise.contract import builtin_contract
    from statewise.verifiers import verify_key
    from statewise.workspace import derive_task_scope

    return verify_key(builtin_contract(), key, derive_task_scope(workspace), workspace)


def test_manifest_entries_are_read_as_each_runner_reads_them(tmp_path: Path) -> None:
    write(tmp_path, {
        "package.json": json.dumps({"scripts": {"test": "vitest", "build:web": "vite build"}}),
        # GNUmakefile is the one make reads first; Makefile is never consulted beside it
        "GNUmakefile": "html-%:\n\tsphinx\nlint check: deps\n\truff\nVAR := 1\n.PHONY: lint\n",
        "Makefile": "only-in-makefile:\n\ttrue\n",
        "justfile": "set shell := [\"bash\"]\nversion := '1'\ntest *args='':\n  pytest {{args}}\n"
                    "@build target=\"x\":\n  cargo build\nalias t := test\n",
    })
    expected = {
        "npm.script_exists[test]": True, "npm.script_exists[build:web]": True, "npm.script_exists[lint]": False,
        "make.target_exists[lint]": True, "make.target_exists[check]": True, "make.target_exists[html-en]": True,
        "make.target_exists[VAR]": False, "make.target_exists[.PHONY]": False,
        "make.target_exists[only-in-makefile]": False,
        "just.recipe_exists[test]": True, "just.recipe_exists[build]": True, "just.recipe_exists[t]": True,
        "just.recipe_exists[version]": False, "just.recipe_exists[set]": False,
    }
    observed = {}
    for key in expected:
        observation = _entry(tmp_path, key)
        assert observation.status is OBSERVED, (key, observation.detail)
        observed[key] = observation.value
    assert observed == expected


def test_a_missing_manifest_declares_nothing_and_a_broken_one_decides_nothing(tmp_path: Path) -> None:
    assert _entry(tmp_path, "npm.script_exists[test]").value is False
    assert _entry(tmp_path, "make.target_exists[test]").value is False
    assert _entry(tmp_path, "just.recipe_exists[test]").value is False
    write(tmp_path, {"package.json": "{\"scripts\": {\"test\": "})
    broken = _entry(tmp_path, "npm.script_exists[test]")
    assert broken.status is UNAVAILABLE and "package.json is not valid JSON" in broken.detail
