"""The command line, driven as a user would: real store files, real output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from statewise.cli import main

REPO_MAIN = "repo:github.com/acme/app@main"
TASK = "user:dev,workspace:/home/dev/src/app,repo:github.com/acme/app@main"


@pytest.fixture
def run(tmp_path):
    store = str(tmp_path / "store.db")

    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(main, ["--store", store, *args], input=input, catch_exceptions=False)

    return invoke


def test_init_creates_the_store(run, tmp_path):
    result = run("init", "--json")
    assert result.exit_code == 0
    info = json.loads(result.output)
    assert info["schema_version"] == 1 and info["records"] == 0
    assert (tmp_path / "store.db").exists()


def test_add_get_list_history_round_trip(run):
    added = run("record", "add", "repository.protected", "false", "--scope", REPO_MAIN, "--json")
    assert added.exit_code == 0, added.output
    record = json.loads(added.output)
    assert record["value"] is False and record["value_type"] == "bool"

    got = json.loads(run("record", "get", "repository.protected", "--scope", REPO_MAIN, "--json").output)
    assert got["id"] == record["id"]

    listed = json.loads(run("record", "list", "--task", TASK, "--json").output)
    assert [r["id"] for r in listed["records"]] == [record["id"]]

    replaced = run("record", "add", "repository.protected", "true", "--scope", REPO_MAIN, "--replace",
                   "--reason", "origin protects main")
    assert replaced.exit_code == 0 and f"superseded {record['id']}" in replaced.output

    history = json.loads(run("record", "history", "repository.protected", "--scope", REPO_MAIN, "--json").output)
    assert [(r["value"], r["status"]) for r in history] == [(False, "superseded"), (True, "active")]

    lineage = run("record", "lineage", history[1]["id"])
    assert "origin protects main" in lineage.output and record["id"] in lineage.output


def test_bad_input_is_one_line_and_nonzero(run):
    cases = [
        (["record", "add", "repository.protected", "yes", "--scope", REPO_MAIN], "expected true or false"),
        (["record", "add", "repository.protected", "true", "--scope", "repo:"], "accepted forms"),
        (["record", "add", "no.such_key", "1", "--scope", "global"], "does not declare this key"),
        (["record", "add", "project.package_manager", "conda", "--scope", "global"], "one of"),
        (["record", "add", "repository.protected", "true", "--scope", "global", "--type", "string"], "expected"),
        (["record", "add", "repository.protected", "true", "--scope", "global", "--observed-at", "yesterday"],
         "--observed-at"),
        (["record", "lineage", "rec_missing"], "no record with id"),
        (["record", "list", "--task", "user:a,user:b"], "given twice"),
    ]
    for args, expected in cases:
        result = run(*args)
        assert result.exit_code != 0, args
        assert expected in result.output, (args, result.output)
        assert "Traceback" not in result.output
    assert json.loads(run("init", "--json").output)["records"] == 0


def test_duplicate_add_without_replace_is_refused(run):
    assert run("record", "add", "project.test_command", "pytest", "--scope", REPO_MAIN).exit_code == 0
    result = run("record", "add", "project.test_command", "tox", "--scope", REPO_MAIN)
    assert result.exit_code == 1 and "already has an active record" in result.output


def test_get_missing_exits_one(run):
    assert run("init").exit_code == 0
    result = run("record", "get", "project.test_command", "--scope", REPO_MAIN)
    assert result.exit_code == 1 and "no active record" in result.output


def test_retract_revert_export_import(run, tmp_path):
    first = json.loads(run("record", "add", "project.test_command", "pytest", "--scope", "global", "--json").output)
    second = json.loads(run("record", "add", "project.test_command", "tox", "--scope", "global", "--replace",
                            "--json").output)
    reverted = json.loads(run("record", "revert", second["id"], "--reason", "tox was a typo", "--json").output)
    assert reverted["restored"]["value"] == "pytest" and reverted["restored"]["supersedes"] == second["id"]
    retracted = run("record", "retract", reverted["restored"]["id"], "--reason", "forget it")
    assert retracted.exit_code == 0

    export = tmp_path / "out.jsonl"
    assert run("record", "export", str(export)).exit_code == 0
    lines = export.read_text().splitlines()
    assert sum(1 for line in lines if json.loads(line)["type"] == "record") == 3
    assert first["id"] in export.read_text()

    other = str(tmp_path / "other.db")
    imported = CliRunner().invoke(main, ["--store", other, "record", "import", str(export)])
    assert imported.exit_code == 0 and f"imported {len(lines)} lines" in imported.output

    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n{oops\n")
    empty = str(tmp_path / "empty.db")
    failed = CliRunner().invoke(main, ["--store", empty, "record", "import", str(bad)])
    assert failed.exit_code == 2 and "bad.jsonl:2" in failed.output
    count = CliRunner().invoke(main, ["--store", empty, "init", "--json"])
    assert json.loads(count.output)["records"] == 0


def test_contract_check_reports_ok_and_errors(tmp_path):
    from statewise.contract import list_builtin_contracts  # noqa: F401 - the built-in must import

    good = tmp_path / "ext.yaml"
    good.write_text("extends: coding\nname: team\nversion: 1\nstate:\n  team.deploy_window:\n"
                    "    type: string\n    scope: repo\n    authority: developer\n")
    result = CliRunner().invoke(main, ["contract", "check", str(good), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["keys"] >= 31
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nversion: 1\nstate:\n  a.b:\n    type: boolean\n    scope: repo\n    authority: machine\n")
    result = CliRunner().invoke(main, ["contract", "check", str(bad)])
    assert result.exit_code == 2
    assert "bad.yaml" in result.output and "state.a.b.type" in result.output


def test_figure1_demo_runs_for_real_in_a_subprocess(tmp_path):
    done = subprocess.run([sys.executable, "-m", "statewise", "demo"], capture_output=True, text=True,
                          timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "main unchanged; agent/push-the-changes created" in done.stdout
    assert list(tmp_path.iterdir()) == []  # nothing written here unless asked
    done = subprocess.run([sys.executable, "-m", "statewise", "demo", "--report", "demo.json"],
                          capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "full reports: demo.json" in done.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["demo.json"]
    reports = json.loads((tmp_path / "demo.json").read_text())
    assert reports["task1"]["verdict"] == "execute" and reports["task1"]["proposal"]["args"]["force"] is True
    assert reports["task1"]["action"]["args"]["branch"] == "agent/push-the-changes"
    reused = [p for p in reports["task2"]["premises"] if p["key"] == "repository.protected"]
    assert reused and reused[0]["route"] == "reliability"
    assert "Traceback" not in done.stderr


def test_store_demo_runs_in_a_subprocess():
    done = subprocess.run([sys.executable, "-m", "statewise.cli", "demo", "store"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "nothing overwritten" in done.stdout


def test_bench_command_runs_a_case_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(main, ["bench", "--only", "git-push-stale-protection", "--conditions", "corrupted",
                                       "--jobs", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    outcomes = {(e["method"], e["condition"]): e for e in data["episodes"]}
    assert outcomes[("statewise", "corrupted")]["y"] == 1 and outcomes[("agent", "corrupted")]["y"] == 0
    bad = CliRunner().invoke(main, ["bench", "--methods", "nonsense"])
    assert bad.exit_code == 2 and "unknown method" in bad.output


def test_bench_quick_runs_the_primary_set_in_a_subprocess(tmp_path):
    """What the README's first command runs, on the quick subset: the primary set, agent and
    statewise, every episode judged, the seen/unseen split from transfer.json."""
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, "-m", "statewise.cli", "bench", "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads(out.read_text())
    assert data["sets"] == ["primary"] and data["quick"] is True and data["all"] is False
    assert data["methods"] == ["agent", "statewise"] and data["methods_by_set"] == {"primary": ["agent", "statewise"]}
    episodes = data["episodes"]
    assert episodes and all(e["judged"] for e in episodes) and {e["set"] for e in episodes} == {"primary"}
    assert {e["method"] for e in episodes} == {"agent", "statewise"}
    assert {e["condition"] for e in episodes} == {"correct", "corrupted", "removed"}
    assert {(g["set"], g["method"]) for g in data["metrics"]["groups"]} == {("primary", "agent"),
                                                                            ("primary", "statewise")}
    assert data["transfer"].endswith("transfer.json") and data["metrics"]["transfer"]
    assert "set primary:" in done.stdout and "Seen vs unseen: set primary" in done.stdout


def test_bench_all_refuses_explicit_sets_or_methods_and_unknown_ids():
    result = CliRunner().invoke(main, ["bench", "--all", "--sets", "dev"])
    assert result.exit_code == 2 and "--all runs every set, baseline and ablation" in result.output
    assert "cannot be combined with --sets" in result.output
    result = CliRunner().invoke(main, ["bench", "--all", "--methods", "statewise"])
    assert result.exit_code == 2 and "cannot be combined with --methods" in result.output
    result = CliRunner().invoke(main, ["bench", "--only", "no-such-case"])
    assert result.exit_code == 2 and "no case or sequence no-such-case" in result.output


def test_bench_reports_a_malformed_transfer_file_in_one_line(tmp_path):
    from tests.bench.conftest import minimal_case, write_case

    write_case(tmp_path / "primary", minimal_case())
    (tmp_path / "transfer.json").write_text('{"format": "statewise-transfer/1", "cases": {"push-small": {}}}')
    result = CliRunner().invoke(main, ["bench", "--cases", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path / 'transfer.json'}: cases.push-small.unseen: expected an object" in result.output
    assert "Traceback" not in result.output
