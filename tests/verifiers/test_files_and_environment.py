"""Filesystem, configuration-file, environment, PATH and project-convention adapters on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statewise.verifiers import ObservationStatus
from statewise.verifiers.config import parse_dotenv, parse_dotted_path
from tests.verifiers.helpers import observe, private_env, shim, write_exe

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE


# --- filesystem ---------------------------------------------------------------------------------


def test_fs_exists_and_is_dir(tmp_path: Path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.bin").write_bytes(b"x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert observe("fs.exists", tmp_path, value_type="bool", args={"path": "build/out.bin"}).value is True
    missing = observe("fs.exists", tmp_path, value_type="bool", args={"path": "dist"})
    assert missing.status is OBSERVED
    assert missing.value is False
    dangling = observe("fs.exists", tmp_path, value_type="bool", args={"path": "dangling"})
    assert dangling.value is False
    assert "dangling symlink" in dangling.detail
    assert observe("fs.is_dir", tmp_path, value_type="bool", args={"path": "build"}).value is True
    assert observe("fs.is_dir", tmp_path, value_type="bool", args={"path": "build/out.bin"}).value is False
    assert observe("fs.is_dir", tmp_path, value_type="bool", args={"path": "dist"}).value is False
    absolute = observe("fs.exists", tmp_path, value_type="bool", args={"path": str(tmp_path / "build")})
    assert absolute.value is True


def test_fs_paths_outside_the_workspace_are_refused(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret").write_text("x", encoding="utf-8")
    for path in ("../secret", str(tmp_path / "secret"), "a/../../secret"):
        seen = observe("fs.exists", workspace, value_type="bool", args={"path": path})
        assert seen.status is UNAVAILABLE, path
        assert "outside the workspace" in seen.detail


def test_fs_realpath(tmp_path: Path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    seen = observe("fs.realpath", tmp_path, value_type="path", args={"path": str(tmp_path / "link")})
    assert seen.value == str((tmp_path / "real").resolve())
    assert observe("fs.realpath", tmp_path, value_type="path", args={"path": "gone"}).status is ABSENT


# --- configuration files -------------------------------------------------------------------------


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\n[tool.pytest.ini_options]\naddopts = "-ra -q"\ntestpaths = ["tests", "it"]\n'
        "[tool.black]\nline-length = 100\nfast = true\n",
        encoding="utf-8",
    )
    (tmp_path / "package.json").write_text(
        json.dumps(
            {
                "name": "web",
                "engines": {"node": ">=20"},
                "devDependencies": {"@types/node": "20.1.0"},
                "settings": {"python.analysis.extraPaths": ["src"]},
                "items": [{"id": 7}],
                "nothing": None,
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "config.yaml").write_text("server:\n  port: 8080\n  debug: yes\n", encoding="utf-8")
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -x\n[metadata]\nName = app\n", encoding="utf-8")
    (tmp_path / ".env").write_text(
        "# comment\nexport DATABASE_URL=\"postgres://db/app\"\nDEBUG=1 # inline\nQUOTED='a # b'\n", encoding="utf-8"
    )
    return tmp_path


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("pyproject.toml:project.name", "app"),
        ("pyproject.toml:tool.pytest.ini_options.addopts", "-ra -q"),
        ("pyproject.toml:tool.pytest.ini_options.testpaths", '["tests","it"]'),
        ("pyproject.toml:tool.black.line-length", "100"),
        ("pyproject.toml:tool.black.fast", "true"),
        ("package.json:engines.node", ">=20"),
        ('package.json:devDependencies."@types/node"', "20.1.0"),
        ('package.json:settings."python.analysis.extraPaths".0', "src"),
        ("package.json:items.0.id", "7"),
        ("config.yaml:server.port", "8080"),
        ("config.yaml:server.debug", "true"),
        ("setup.cfg:tool:pytest.addopts", "-x"),
        ("setup.cfg:metadata.name", "app"),
        (".env:DATABASE_URL", "postgres://db/app"),
        (".env:DEBUG", "1"),
        (".env:QUOTED", "a # b"),
    ],
)
def test_config_value_reads_each_format(configs: Path, spec: str, expected: str):
    seen = observe("config.value", configs, value_type="string", args={"spec": spec})
    assert seen.status is OBSERVED, seen.detail
    assert seen.value == expected


def test_config_value_typed_and_by_file_and_path(configs: Path):
    assert (
        observe(
            "config.value", configs, value_type="int", args={"file": "pyproject.toml", "path": "tool.black.line-length"}
        ).value
        == 100
    )
    assert (
        observe("config.value", configs, value_type="bool", args={"spec": "pyproject.toml:tool.black.fast"}).value
        is True
    )
    listed = observe(
        "config.value", configs, value_type="list", args={"spec": "pyproject.toml:tool.pytest.ini_options.testpaths"}
    )
    assert listed.value == ["tests", "it"]
    wrong = observe("config.value", configs, value_type="int", args={"spec": "pyproject.toml:project.name"})
    assert wrong.status is UNAVAILABLE


def test_config_value_absent_and_unavailable(configs: Path):
    assert observe("config.value", configs, value_type="string", args={"spec": "nope.toml:a.b"}).status is ABSENT
    missing_key = observe(
        "config.value", configs, value_type="string", args={"spec": "pyproject.toml:tool.ruff.line-length"}
    )
    assert missing_key.status is ABSENT
    assert "no 'ruff'" in missing_key.detail
    assert (
        observe("config.value", configs, value_type="string", args={"spec": "package.json:nothing"}).status
        is UNAVAILABLE
    )
    (configs / "broken.json").write_text("{not json", encoding="utf-8")
    broken = observe("config.value", configs, value_type="string", args={"spec": "broken.json:a"})
    assert broken.status is UNAVAILABLE
    assert "not valid json" in broken.detail
    (configs / "Dockerfile").write_text("FROM x\n", encoding="utf-8")
    assert observe("config.value", configs, value_type="string", args={"spec": "Dockerfile:a"}).status is UNAVAILABLE
    assert observe("config.value", configs, value_type="string", args={"spec": "../x.toml:a"}).status is UNAVAILABLE
    assert observe("config.value", configs, value_type="string", args={"spec": "no-colon"}).status is UNAVAILABLE


def test_path_and_dotenv_parsers():
    assert parse_dotted_path('a."b.c".0') == ["a", "b.c", "0"]
    assert parse_dotted_path("tool:pytest.addopts") == ["tool:pytest", "addopts"]
    assert parse_dotenv("A=1\nexport B='x y'\nC=\"l1\\nl2\"\n") == {"A": "1", "B": "x y", "C": "l1\nl2"}


# --- environment and PATH ----------------------------------------------------------------------------


def test_env_var_reads_the_agents_environment(tmp_path: Path):
    env = private_env(STATEWISE_TEST_FLAG="on", EMPTY_ONE="")
    seen = observe("env.var", tmp_path, value_type="string", args={"name": "STATEWISE_TEST_FLAG"}, env=env)
    assert seen.status is OBSERVED
    assert seen.value == "on"
    assert observe("env.var", tmp_path, value_type="string", args={"name": "EMPTY_ONE"}, env=env).value == ""
    assert (
        observe("env.var", tmp_path, value_type="string", args={"name": "NOT_SET_ANYWHERE"}, env=env).status is ABSENT
    )
    assert observe("env.var", tmp_path, value_type="string", args={"name": "A=B"}, env=env).status is UNAVAILABLE


def test_env_var_defaults_to_this_process_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("STATEWISE_REAL_VARIABLE", "42")
    assert observe("env.var", tmp_path, value_type="string", args={"name": "STATEWISE_REAL_VARIABLE"}).value == "42"


def test_path_which_uses_the_agents_path(tmp_path: Path):
    shims = tmp_path / "bin"
    tool = shim(shims, "mytool", "exit 0")
    env = private_env(shims)
    seen = observe("path.which", tmp_path, value_type="path", args={"name": "mytool"}, env=env)
    assert seen.status is OBSERVED
    assert seen.value == str(tool)
    # A relative PATH entry is relative to the workspace, not to this process's directory.
    workspace = tmp_path / "ws"
    local = write_exe(workspace / "node_modules" / ".bin" / "eslint", "#!/bin/sh\n")
    relative = private_env(Path("node_modules/.bin"), keep_system_path=False)
    assert observe("path.which", workspace, value_type="path", args={"name": "eslint"}, env=relative).value == str(
        local
    )
    assert observe("path.which", tmp_path, value_type="path", args={"name": "no-such-tool-x"}, env=env).status is ABSENT
    (shims / "notexec").write_text("x", encoding="utf-8")
    assert observe("path.which", tmp_path, value_type="path", args={"name": "notexec"}, env=env).status is ABSENT
    assert (
        observe("path.which", tmp_path, value_type="path", args={"name": "../bin/mytool"}, env=env).status
        is UNAVAILABLE
    )


# --- project conventions ---------------------------------------------------------------------------


def _write(root: Path, name: str, text: str) -> None:
    (root / name).write_text(text, encoding="utf-8")


def test_test_command_precedence(tmp_path: Path):
    def command() -> tuple[ObservationStatus, object]:
        seen = observe("project.test_command", tmp_path, value_type="string")
        return seen.status, seen.value

    assert command()[0] is ABSENT
    _write(tmp_path, "setup.cfg", "[tool:pytest]\naddopts = -x\n")
    assert command() == (OBSERVED, "pytest")
    _write(tmp_path, "Makefile", "VAR := 1\ntest := nope\nlint test: deps\n\tpytest\n")
    assert command() == (OBSERVED, "make test")
    _write(tmp_path, "package.json", json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}))
    assert command() == (OBSERVED, "make test")  # npm's placeholder is not a test command
    _write(tmp_path, "package.json", json.dumps({"scripts": {"test": "vitest run"}}))
    assert command() == (OBSERVED, "npm test")
    _write(tmp_path, "tox.ini", "[pytest]\naddopts = -q\n")
    assert command() == (OBSERVED, "npm test")  # a tox.ini holding only pytest settings is not tox
    _write(tmp_path, "tox.ini", "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n")
    assert command() == (OBSERVED, "tox")
    _write(tmp_path, "pyproject.toml", '[tool.statewise]\ntest-command = ["pytest", "-x", "tests/unit dir"]\n')
    assert command() == (OBSERVED, "pytest -x 'tests/unit dir'")
    _write(tmp_path, "pyproject.toml", "[tool.statewise\n")
    assert command()[0] is UNAVAILABLE


def test_test_command_from_pytest_configuration(tmp_path: Path):
    _write(tmp_path, "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n")
    assert observe("project.test_command", tmp_path, value_type="string").value == "pytest"
    (tmp_path / "pyproject.toml").unlink()
    _write(tmp_path, "pytest.ini", "")
    assert observe("project.test_command", tmp_path, value_type="string").value == "pytest"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (["uv.lock", "pyproject.toml"], "uv"),
        (["poetry.lock", "pyproject.toml"], "poetry"),
        (["pnpm-lock.yaml", "package.json"], "pnpm"),
        (["yarn.lock", "package.json"], "yarn"),
        (["package-lock.json", "package.json"], "npm"),
        (["package.json"], "npm"),
        (["requirements.txt"], "pip"),
        (["requirements.txt", "pyproject.toml"], "pip"),
        (["pdm.lock", "pyproject.toml"], "pdm"),
        (["bun.lockb", "package.json"], "bun"),
        (["bun.lock", "package.json"], "bun"),
    ],
)
def test_package_manager_from_lock_files(tmp_path: Path, files: list[str], expected: str):
    for name in files:
        _write(tmp_path, name, "{}" if name.endswith(".json") else "")
    seen = observe(
        "project.package_manager",
        tmp_path,
        value_type="enum",
        choices=("pip", "uv", "poetry", "pdm", "npm", "pnpm", "yarn", "bun"),
    )
    assert seen.status is OBSERVED
    assert seen.value == expected


def test_package_manager_details_absent_and_ecosystem(tmp_path: Path):
    choices = ("pip", "uv", "poetry", "npm", "pnpm", "yarn")
    assert observe("project.package_manager", tmp_path, value_type="enum", choices=choices).status is ABSENT
    _write(tmp_path, "pyproject.toml", "[tool.poetry]\nname = 'x'\n")
    _write(tmp_path, "package.json", json.dumps({"packageManager": "pnpm@9.1.0"}))
    both = observe("project.package_manager", tmp_path, value_type="enum", choices=choices)
    assert both.value == "poetry"
    assert "pnpm" in both.detail
    node = observe("project.package_manager", tmp_path, value_type="enum", choices=choices, args={"ecosystem": "node"})
    assert node.value == "pnpm"
    # A value outside the key's declared choices is never reported as observed.
    narrow = observe("project.package_manager", tmp_path, value_type="enum", choices=("pip", "uv"))
    assert narrow.status is UNAVAILABLE


def test_unreadable_config_file_is_unavailable(tmp_path: Path):
    (tmp_path / "settings.json").mkdir()  # exists, but cannot be read as a file
    seen = observe("config.value", tmp_path, value_type="string", args={"spec": "settings.json:a"})
    assert seen.status is UNAVAILABLE
    assert "cannot read" in seen.detail
