"""Project settings (``statewise.settings``): where the project is, how relative paths read,
and the precedence flag > environment > config.toml > default, on real directories and real
git repositories, and through real ``python -m statewise`` subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from statewise.errors import InputError
from statewise.settings import missing_store_error, project_root, resolve_settings
from tests.test_cli_conventions import TEAM_CONTRACT, _env, sw


def _git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, timeout=30)
    return path


def test_the_project_is_the_git_root_even_from_a_subdirectory(tmp_path):
    repo = _git_repo(tmp_path / "repo")
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    assert project_root(sub) == repo


def test_outside_git_the_project_is_the_nearest_folder_with_statewise(tmp_path):
    (tmp_path / "proj" / ".statewise").mkdir(parents=True)
    deep = tmp_path / "proj" / "x" / "y"
    deep.mkdir(parents=True)
    assert project_root(deep) == tmp_path / "proj"
    bare = tmp_path / "other"
    bare.mkdir()
    assert project_root(bare) == bare


def test_precedence_is_flag_then_environment_then_file_then_default(tmp_path):
    repo = _git_repo(tmp_path / "repo")
    (repo / ".statewise").mkdir()
    (repo / ".statewise" / "config.toml").write_text(
        'store = "postgresql://127.0.0.1/team"\ncontract = "c.yaml"\non-pass = "allow"\n')
    from_file = resolve_settings(repo, environ={})
    assert from_file.store.value == "postgresql://127.0.0.1/team"  # a URL is not made a path
    assert from_file.contract.value == str(repo / "c.yaml")  # relative to the project root
    assert from_file.on_pass.value == "allow"
    assert from_file.memory_write_back.value == "ask" and from_file.memory_write_back.source == "default"
    env = {"STATEWISE_STORE": "/srv/env.db", "STATEWISE_CONTRACT": "", "STATEWISE_ON_PASS": "defer"}
    from_env = resolve_settings(repo, environ=env)
    assert (from_env.store.value, from_env.store.source) == ("/srv/env.db", "$STATEWISE_STORE")
    assert from_env.contract.value == str(repo / "c.yaml")  # an empty variable counts as unset
    assert from_env.on_pass.value == "defer"
    flagged = resolve_settings(repo, store="flag.db", environ=env)
    assert (flagged.store.value, flagged.store.source) == ("flag.db", "flag")
    with pytest.raises(InputError, match="on-pass from \\$STATEWISE_ON_PASS must be one of defer, allow"):
        resolve_settings(repo, environ={"STATEWISE_ON_PASS": "always"})


def test_a_missing_store_names_the_nearby_one(tmp_path):
    (tmp_path / ".statewise").mkdir()
    (tmp_path / ".statewise" / "store.db").write_bytes(b"")
    assert "did you mean --store" in str(missing_store_error(str(tmp_path / ".statewise" / "stroe.db"), "flag"))
    assert "did you mean --store" in str(missing_store_error(str(tmp_path / ".statwise" / "store.db"), "flag"))
    far = str(missing_store_error(str(tmp_path / "nothing" / "here.db"), "default"))
    assert "did you mean" not in far and "statewise init" in far and "--store" in far


def test_records_made_with_the_projects_contract_reimport_without_flags(tmp_path):
    repo = _git_repo(tmp_path / "repo")
    (repo / "team.yaml").write_text(TEAM_CONTRACT)
    (repo / ".statewise").mkdir()
    (repo / ".statewise" / "config.toml").write_text('contract = "team.yaml"\n')
    scope = "repo:github.com/acme/app"
    assert sw("record", "add", "team.deploy_window", "weekdays", "--scope", scope, cwd=repo).returncode == 0
    exported = sw("record", "export", cwd=repo)
    assert exported.returncode == 0 and "team.deploy_window" in exported.stdout
    other = tmp_path / "other.db"
    imported = sw("--store", str(other), "record", "import", "-", cwd=repo, input=exported.stdout)
    assert imported.returncode == 0, imported.stderr
    got = sw("--store", str(other), "record", "get", "team.deploy_window", "--scope", scope, "--json", cwd=repo)
    assert json.loads(got.stdout)["value"] == "weekdays"
    # without the project's settings the same import is refused: the key is not the built-in contract's
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused = sw("--store", str(tmp_path / "third.db"), "record", "import", "-", cwd=elsewhere,
                 input=exported.stdout)
    assert refused.returncode != 0 and "team.deploy_window" in refused.stderr


def test_verbose_says_where_each_setting_came_from_and_quiet_says_nothing(tmp_path):
    repo = _git_repo(tmp_path / "repo")
    assert sw("init", cwd=repo).returncode == 0
    loud = sw("-v", "record", "list", "--json", cwd=repo, env=_env(STATEWISE_CONTRACT=""))
    assert loud.returncode == 0
    assert f"project: {repo}" in loud.stderr and "contract: (built-in) (default)" in loud.stderr
    assert "on-pass: defer (default)" in loud.stderr
    out = tmp_path / "out.jsonl"
    quiet = sw("-q", "record", "export", str(out), cwd=repo)
    assert quiet.returncode == 0 and quiet.stderr == "" and out.exists()
    said = sw("record", "export", str(out), cwd=repo)
    assert said.stderr.startswith("exported ")
    assert subprocess.run([sys.executable, "-m", "statewise", "-q", "record", "list"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60).stderr.startswith("error: no store")


def test_store_check_reads_the_store_the_projects_settings_name(tmp_path):
    repo = _git_repo(tmp_path / "repo")
    (repo / ".statewise").mkdir()
    (repo / ".statewise" / "config.toml").write_text('store = "team.db"\n')
    scope = "repo:github.com/acme/app"
    assert sw("record", "add", "git.default_branch", "main", "--scope", scope, cwd=repo).returncode == 0
    assert (repo / "team.db").is_file() and not (repo / ".statewise" / "store.db").exists()
    checked = sw("store", "check", "--json", cwd=repo)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["records"] >= 1
    # a store that is not there is an error naming it, not a new empty store reported sound
    (repo / ".statewise" / "config.toml").write_text('store = "tema.db"\n')
    missing = sw("store", "check", cwd=repo)
    assert missing.returncode != 0 and "tema.db" in missing.stderr and not (repo / "tema.db").exists()


@pytest.mark.parametrize("text", [
    "", 'store = "team.db"\ncontract = "c.yaml"\non-pass = "allow"\nmemory-write-back = "auto"\n',
    'on-pass = "defer"\n', 'on-pass = "sometimes"\n', "on-pass = 1\n", 'on_pass = "allow"\n',
    'memory-write-back = "never"\nstore = ["a"]\n', 'extra = "x"\n',
])
def test_config_toml_read_without_pydantic_agrees_with_the_model(tmp_path, text):
    # The plain check reads what a valid file holds; anything else goes to the pydantic model,
    # so both must give the same settings for a valid file and the model's refusal otherwise.
    from statewise.settings import _checked_config, _plain_config, read_config

    (tmp_path / ".statewise").mkdir()
    path = tmp_path / ".statewise" / "config.toml"
    path.write_text(text)
    document = tomllib.loads(text)
    try:
        expected = _checked_config(document, path)
    except InputError as refusal:
        assert _plain_config(document) is None
        with pytest.raises(InputError) as raised:
            read_config(tmp_path)
        assert str(raised.value) == str(refusal)
    else:
        assert _plain_config(document) == expected
        assert read_config(tmp_path) == (expected, path)
