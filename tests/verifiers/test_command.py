"""The generic declarative ``command`` verifier, with tool shims on a private PATH."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from statewise.contract import VerifierSpec
from statewise.verifiers import ObservationStatus, fill_placeholders
from statewise.verifiers.base import parse_text_value
from statewise.verifiers.command import parse_json_path
from tests.verifiers.helpers import observe_command, private_env, shim

OBSERVED, ABSENT, UNAVAILABLE = ObservationStatus.OBSERVED, ObservationStatus.ABSENT, ObservationStatus.UNAVAILABLE


@pytest.fixture
def shims(tmp_path: Path) -> Path:
    return tmp_path / "bin"


def test_exit_status_map(tmp_path: Path, shims: Path):
    shim(shims, "probe", 'exit "$1"')
    env = private_env(shims)
    read = {"exit_status": {0: True, 1: False}}
    assert observe_command(tmp_path, ["probe", "0"], read, value_type="bool", env=env).value is True
    assert observe_command(tmp_path, ["probe", "1"], read, value_type="bool", env=env).value is False
    unmapped = observe_command(tmp_path, ["probe", "2"], read, value_type="bool", env=env)
    assert unmapped.status is UNAVAILABLE
    assert "exit status 2 is not mapped" in unmapped.detail


def test_real_git_through_the_command_adapter(tmp_path: Path):
    # The coding contract's merge_in_progress binding, against a real repository.
    from tests.verifiers.helpers import make_repo

    repo = make_repo(tmp_path / "r")
    read = {"exit_status": {0: True, 1: False}}
    argv = ["git", "rev-parse", "-q", "--verify", "MERGE_HEAD"]
    seen = observe_command(repo.work, argv, read, value_type="bool")
    assert seen.status is OBSERVED
    assert seen.value is False
    assert seen.reference == "git rev-parse -q --verify MERGE_HEAD"


def test_regex_reads_group_one_and_parses_the_type(tmp_path: Path, shims: Path):
    shim(shims, "npm", 'echo "10.2.4"')
    shim(shims, "counter", 'echo "items: 17"')
    shim(shims, "flag", 'echo "enabled=TRUE"')
    env = private_env(shims)
    version = observe_command(
        tmp_path, ["npm", "--version"], {"regex": r"^\s*v?(\d+(?:\.\d+)*\S*)"}, value_type="version", env=env
    )
    assert version.status is OBSERVED
    assert version.value == "10.2.4"
    assert observe_command(tmp_path, ["counter"], {"regex": r"items: (\d+)"}, value_type="int", env=env).value == 17
    assert observe_command(tmp_path, ["flag"], {"regex": r"enabled=(\w+)"}, value_type="bool", env=env).value is True
    nomatch = observe_command(tmp_path, ["counter"], {"regex": r"widgets: (\d+)"}, value_type="int", env=env)
    assert nomatch.status is UNAVAILABLE
    assert "nothing in stdout matches" in nomatch.detail


def test_stream_stderr_and_cwd(tmp_path: Path, shims: Path):
    shim(shims, "java", 'echo "openjdk version \\"21.0.2\\"" >&2')
    shim(shims, "where", "pwd")
    env = private_env(shims)
    read = {"regex": r'version "([^"]+)"'}
    assert (
        observe_command(tmp_path, ["java", "-version"], read, value_type="version", env=env, stream="stderr").value
        == "21.0.2"
    )
    assert observe_command(tmp_path, ["java", "-version"], read, value_type="version", env=env).status is UNAVAILABLE
    (tmp_path / "sub").mkdir()
    here = observe_command(tmp_path, ["where"], {"regex": "(.+)"}, value_type="path", env=env, cwd="{workspace}/sub")
    assert here.value == str(tmp_path / "sub")
    assert observe_command(tmp_path, ["where"], {"regex": "(.+)"}, value_type="path", env=env).value == str(tmp_path)


def test_json_path_with_a_qualifier_that_needs_quoting(tmp_path: Path, shims: Path):
    listing = {"name": "web", "dependencies": {"@types/node": {"version": "20.1.0"}, "left-pad": {"version": "1.3.0"}}}
    shim(shims, "npm", f"cat <<'EOF'\n{json.dumps(listing)}\nEOF")
    env = private_env(shims)
    argv = ["npm", "ls", "{qualifier}", "--depth=0", "--json"]
    read = {"json_path": '$.dependencies["{qualifier}"].version'}
    seen = observe_command(tmp_path, argv, read, value_type="version", env=env, qualifier="@types/node")
    assert seen.status is OBSERVED
    assert seen.value == "20.1.0"
    assert seen.reference == "npm ls @types/node --depth=0 --json"
    missing = observe_command(tmp_path, argv, read, value_type="version", env=env, qualifier="react")
    assert missing.status is UNAVAILABLE  # a path that selects nothing is not proof of absence
    assert "selects nothing" in missing.detail


def test_json_values_become_the_key_type(tmp_path: Path, shims: Path):
    shim(
        shims,
        "info",
        """cat <<'EOF'
{"ok": true, "n": 3, "names": ["a", "b"], "nested": {"x": [1, 2]}, "float": 3.10}
EOF""",
    )
    env = private_env(shims)
    assert observe_command(tmp_path, ["info"], {"json_path": "$.ok"}, value_type="bool", env=env).value is True
    assert observe_command(tmp_path, ["info"], {"json_path": "$.n"}, value_type="int", env=env).value == 3
    assert observe_command(tmp_path, ["info"], {"json_path": "$.names"}, value_type="list", env=env).value == ["a", "b"]
    assert observe_command(tmp_path, ["info"], {"json_path": "$.names[1]"}, value_type="string", env=env).value == "b"
    assert (
        observe_command(tmp_path, ["info"], {"json_path": "$.nested.x"}, value_type="string", env=env).value == "[1,2]"
    )
    # A float is never a version (3.10 would read back as 3.1).
    assert (
        observe_command(tmp_path, ["info"], {"json_path": "$.float"}, value_type="version", env=env).status
        is UNAVAILABLE
    )
    assert observe_command(tmp_path, ["info"], {"json_path": "$.ok"}, value_type="int", env=env).status is UNAVAILABLE


def test_not_json_failure_and_missing_program(tmp_path: Path, shims: Path):
    shim(shims, "text", "echo hello")
    shim(shims, "fails", 'echo "{}"; echo "broken" >&2; exit 3')
    env = private_env(shims)
    assert observe_command(tmp_path, ["text"], {"json_path": "$.a"}, value_type="string", env=env).status is UNAVAILABLE
    failed = observe_command(tmp_path, ["fails"], {"json_path": "$.a"}, value_type="string", env=env)
    assert failed.status is UNAVAILABLE
    assert "exited with status 3: broken" in failed.detail
    missing = observe_command(tmp_path, ["no-such-program-x"], {"regex": "(.*)"}, value_type="string", env=env)
    assert missing.status is UNAVAILABLE
    assert "not found on PATH" in missing.detail


def test_a_hanging_command_is_killed_at_the_timeout(tmp_path: Path, shims: Path):
    # sh forks sleep, which keeps the output pipe open: the whole process group must die.
    shim(shims, "hang", "echo started; sleep 30; echo never")
    started = time.monotonic()
    seen = observe_command(
        tmp_path, ["hang"], {"regex": "(never)"}, value_type="string", env=private_env(shims), timeout=0.4
    )
    elapsed = time.monotonic() - started
    assert seen.status is UNAVAILABLE
    assert "did not finish within 0.4s" in seen.detail
    assert elapsed < 2.0


def test_qualifiers_stay_single_argv_elements(tmp_path: Path, shims: Path):
    shim(shims, "argc", 'echo "$#:$1"')
    env = private_env(shims)
    hostile = "x; touch pwned $(touch pwned2)"
    seen = observe_command(
        tmp_path, ["argc", "{qualifier}"], {"regex": r"^(.*)$"}, value_type="string", env=env, qualifier=hostile
    )
    assert seen.value == f"1:{hostile}"
    assert not (tmp_path / "pwned").exists()
    assert not (tmp_path / "pwned2").exists()


def test_fill_placeholders_for_command_bindings():
    spec = VerifierSpec.model_validate(
        {
            "adapter": "command",
            "argv": ["npm", "ls", "{qualifier}", "--prefix={workspace}"],
            "cwd": "{workspace}/web",
            "read": {"json_path": '$.dependencies["{qualifier}"].version'},
        }
    )
    args = fill_placeholders(spec, workspace="/ws", branch=None, repo=None, user=None, qualifier="a b")
    assert args == {
        "argv": ["npm", "ls", "a b", "--prefix=/ws"],
        "cwd": "/ws/web",
        "stream": None,
        "read": {"json_path": '$.dependencies["a b"].version'},
    }


def test_text_parsing_rules():
    assert parse_text_value(" True\n", "bool") is True
    with pytest.raises(ValueError):
        parse_text_value("yes", "bool")
    assert parse_text_value("-12", "int") == -12
    assert parse_text_value("v20.1.0\n", "version") == "20.1.0"
    assert parse_text_value('["a", "b"]', "list") == ["a", "b"]
    assert parse_text_value("a\nb\n\nc\n", "list") == ["a", "b", "c"]
    assert parse_text_value("a, b,,c", "list") == ["a", "b", "c"]
    assert parse_text_value("line\n", "string") == "line"
    assert parse_json_path('$.a["b.c"][2]') == ["a", "b.c", 2]


def test_a_pathological_regex_leaves_the_value_unavailable_quickly(tmp_path: Path, shims: Path):
    shim(shims, "probe", "printf 'a%.0s' $(seq 1 5000); echo '!'")
    env = private_env(shims)
    start = time.monotonic()
    seen = observe_command(tmp_path, ["probe"], {"regex": r"^((?:a|aa)+)$"}, value_type="string", env=env)
    assert time.monotonic() - start < 2.0  # the match is cut off at its time bound
    assert seen.status is UNAVAILABLE
    assert "did not finish matching" in seen.detail
