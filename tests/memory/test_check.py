"""Checking memory-file facts against the live workspace: verdicts, store writes, outputs, CLI."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewise.cli import main
from statewise.contract import Contract
from statewise.memory import check_memory, import_memory, render_human, to_json, to_sarif
from statewise.memory.importer import ACTOR
from statewise.records import RecordStatus
from statewise.store.base import Store
from statewise.verifiers import install_branch_protection
from tests.verifiers.helpers import Repo, git

ROOT = Path(__file__).resolve().parents[2]
RUNNING = ".".join(platform.python_version_tuple()[:2])

MEMORY = f"""# Working here

This project uses Python {RUNNING}.
Older notes say the project uses Python 2.7.
The tests run with `npm run test:unit`.
Sources live in `src/app/` and `src/legacy/`.
Never push directly to `main`.
`feature` may be force-pushed.

## Build

```bash
make build
make dist
```

## Lint

- `npm run lint`

## Testing

- `cargo test --workspace`
"""


@pytest.fixture
def workspace(project: Repo) -> Repo:
    """The project with a real virtual environment, protection on origin's main, and MEMORY as AGENTS.md."""
    work = project.work
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(work / ".venv")], check=True, timeout=120)
    (work / ".gitignore").write_text(".venv/\n.statewise/\n")
    (work / "AGENTS.md").write_text(MEMORY)
    # the project declares its Python (a version line is held to it, not to this machine), and
    # src/legacy/ existed when the notes were written: its removal is the evidence they are stale
    (work / "pyproject.toml").write_text(f'[project]\nname = "demo"\nrequires-python = ">={RUNNING}"\n')
    (work / "src" / "legacy").mkdir(parents=True)
    (work / "src" / "legacy" / "old.py").write_text("print('old')\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "memory")
    git(work, "rm", "-q", "-r", "src/legacy")
    git(work, "commit", "-q", "-m", "drop the legacy sources")
    install_branch_protection(project.origin, ["main"])
    return project


def _by_line(report):
    return {(f.line, f.key): f for f in report.findings}


def test_every_fact_gets_a_verdict_with_evidence(workspace: Repo, home: Path, contract: Contract):
    report = check_memory(workspace.work, contract, home=home)
    found = _by_line(report)
    assert found[(3, "runtime.python_version")].status == "valid"
    old = found[(4, "runtime.python_version")]
    # against what the project declares, never this machine's interpreter, and never "corrected" from it
    assert old.status == "defective" and old.correct is None
    assert f"pyproject.toml requires-python: >={RUNNING}" in old.evidence[0]
    test = found[(5, "project.test_command")]
    assert test.status == "defective" and test.correct == "npm test"
    assert any("npm.script_exists[test:unit]" in item for item in test.evidence)
    assert any("package.json scripts: lint, test" in item for item in test.evidence)
    assert found[(6, "fs.exists[src/app/]")].status == "valid"
    legacy = found[(6, "fs.exists[src/legacy/]")]
    assert legacy.status == "defective" and legacy.correct is None
    assert "drop the legacy sources" in " ".join(legacy.evidence)
    assert found[(7, "repository.protected")].status == "valid"  # origin's hook protects main
    assert found[(8, "repository.protected")].status == "valid"  # and not feature
    assert found[(13, "project.command[build]")].status == "valid"
    dist = found[(14, "project.command[build]")]
    assert dist.status == "defective" and any("Makefile targets: build, test" in e for e in dist.evidence)
    assert found[(19, "project.command[lint]")].status == "valid"
    cargo = found[(23, "project.test_command")]
    assert cargo.status == "unresolved" and "names no npm script" in cargo.missing
    assert report.summary == {"files": 1, "lines": len(report.lines), "untyped": 0, "facts": 11,
                              "valid": 6, "defective": 4, "stale?": 0, "generated": 0, "unresolved": 1}
    assert not report.ok


def test_the_human_report_quotes_the_line(workspace: Repo, home: Path, contract: Contract):
    text = render_human(check_memory(workspace.work, contract, home=home))
    assert "AGENTS.md:5: defective: project.test_command = npm run test:unit" in text
    assert "    > The tests run with `npm run test:unit`." in text
    assert "    correct: npm test" in text
    assert "AGENTS.md:23: unresolved" in text
    assert "AGENTS.md:3:" not in text  # valid lines only with verbose


def test_verdicts_are_recorded_on_the_imported_records(workspace: Repo, home: Path, store: Store,
                                                      contract: Contract):
    import_memory(workspace.work, store, contract, home=home)
    report = check_memory(workspace.work, contract, store=store, home=home)
    recorded = {(f.line, f.key): f.recorded for f in report.findings}
    assert recorded[(3, "runtime.python_version")] == "confirmed"  # the first statement in a file is its record
    assert recorded[(4, "runtime.python_version")] == ""  # a shadowed statement has no record to write on
    assert recorded[(5, "project.test_command")] == "superseded"
    assert recorded[(6, "fs.exists[src/app/]")] == "confirmed"
    assert recorded[(6, "fs.exists[src/legacy/]")] == "retracted"  # no new path is known
    scope = report.files[0].scope
    current = store.get_active("project.test_command", scope)
    assert current.value == "npm test" and current.provenance.actor == "statewise.memory.check"
    lineage = store.lineage(current.id)
    assert [r.value for r in lineage.records] == ["npm run test:unit", "npm test"]
    assert "npm.script_exists[test:unit]" in lineage.links[-1].evidence.detail
    assert store.get_active("fs.exists[src/app/]", scope).time.verified_at is not None
    # a re-import does not bring the wrong line back
    again = import_memory(workspace.work, store, contract, home=home)
    known = {i.key for i in again.items if i.action == "known_wrong"}
    assert {"project.test_command", "fs.exists[src/legacy/]"} <= known
    assert store.get_active("project.test_command", scope).value == "npm test"
    # checking twice writes nothing new for what is already corrected
    count = store.count()
    check_memory(workspace.work, contract, store=store, home=home)
    assert store.count() == count


def test_a_defect_without_a_known_correct_value_retracts_the_record(workspace: Repo, home: Path, store: Store,
                                                                    contract: Contract):
    (workspace.work / "AGENTS.md").write_text("## Build\n\n- `make dist`\n")
    import_memory(workspace.work, store, contract, home=home)
    report = check_memory(workspace.work, contract, store=store, home=home)
    assert [f.recorded for f in report.findings] == ["retracted"]
    retracted = [r for r in store.records() if r.key == "project.command[build]"]
    assert retracted[0].status is RecordStatus.RETRACTED
    assert retracted[0].status_reason.startswith("memory check: defective")
    again = import_memory(workspace.work, store, contract, home=home)
    assert [i.action for i in again.items if i.key == "project.command[build]"] == ["known_wrong"]


def test_commands_after_cd_are_checked_in_that_directory(workspace: Repo, home: Path, contract: Contract):
    web = workspace.work / "web"
    web.mkdir()
    (web / "package.json").write_text(json.dumps({"scripts": {"build": "vite build"}}))
    (workspace.work / "AGENTS.md").write_text("## Build\n\n- `cd web && npm run build`\n- `cd web && npm run bundle`\n")
    found = check_memory(workspace.work, contract, home=home).findings
    assert [f.status for f in found] == ["valid", "defective"]


def test_json_and_sarif_outputs(workspace: Repo, home: Path, contract: Contract):
    report = check_memory(workspace.work, contract, home=home)
    data = json.loads(json.dumps(to_json(report)))
    assert data["summary"]["defective"] == 4
    first = data["findings"][0]
    assert {"file", "line", "text", "key", "claimed", "status", "evidence", "correct", "missing"} <= set(first)
    sarif = json.loads(json.dumps(to_sarif(report, version="1.2.3")))
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "statewise-memory-check"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {"memory-defective", "memory-stale",
                                                                 "memory-unresolved"}
    results = run["results"]
    assert len(results) == 5
    test = next(r for r in results if r["properties"]["key"] == "project.test_command" and r["level"] == "error")
    location = test["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "AGENTS.md", "uriBaseId": "SRCROOT"}
    assert location["region"]["startLine"] == 5
    assert "Correct value: npm test" in test["message"]["text"]


def test_cli_exit_status_sarif_and_json(workspace: Repo, home: Path, tmp_path: Path):
    runner = CliRunner()
    store = tmp_path / "cli-store.db"
    sarif = tmp_path / "out.sarif"
    done = runner.invoke(main, ["--store", str(store), "memory", "check", "--cwd", str(workspace.work),
                                "--home", str(home), "--sarif", str(sarif)])
    assert done.exit_code == 1, done.output
    assert "> The tests run with `npm run test:unit`." in done.output
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    imported = runner.invoke(main, ["--store", str(store), "memory", "import", "--cwd", str(workspace.work),
                                    "--home", str(home), "--json"])
    assert imported.exit_code == 0, imported.output
    actions = {item["action"] for item in json.loads(imported.output)["items"]}
    assert "known_wrong" in actions and "added" not in actions


def test_cli_exits_zero_on_a_clean_file_and_no_store_writes_nothing(workspace: Repo, home: Path, tmp_path: Path):
    (workspace.work / "AGENTS.md").write_text("Run the tests with `npm test`.\nCode is in `src/app/`.\n")
    store = tmp_path / "never.db"
    done = CliRunner().invoke(main, ["--store", str(store), "memory", "check", "--no-store", "--json",
                                     "--cwd", str(workspace.work), "--home", str(home)])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["summary"]["valid"] == 2
    assert not store.exists()
    (workspace.work / "AGENTS.md").write_text("## Testing\n\n- `cargo test`\n")
    lenient = CliRunner().invoke(main, ["memory", "check", "--no-store", "--cwd", str(workspace.work), "--home", str(home)])
    strict = CliRunner().invoke(main, ["memory", "check", "--no-store", "--strict", "--cwd", str(workspace.work),
                                       "--home", str(home)])
    assert (lenient.exit_code, strict.exit_code) == (0, 1)


def test_this_repository_checks_clean(tmp_path: Path):
    """statewise memory import/check on StateWise's own AGENTS.md."""
    home = tmp_path / "empty-home"
    home.mkdir()
    store = tmp_path / "self.db"
    # Only Codex's files: a parent directory of the checkout may hold someone's own CLAUDE.md.
    checked = CliRunner().invoke(main, ["--store", str(store), "memory", "check", "--json", "--cwd", str(ROOT),
                                        "--home", str(home), "--agent", "codex"])
    assert checked.exit_code == 0, checked.output
    data = json.loads(checked.output)
    assert "AGENTS.md" in [f["file"] for f in data["files"]]
    assert data["summary"]["defective"] == 0 and data["summary"]["valid"] >= 5
    again = CliRunner().invoke(main, ["--store", str(store), "memory", "import", "--json", "--cwd", str(ROOT),
                                      "--home", str(home), "--agent", "codex"])
    assert again.exit_code == 0 and {i["action"] for i in json.loads(again.output)["items"]} == {"unchanged"}


def test_the_pre_commit_hook_entry_runs_the_check():
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "statewise-memory-check")
    assert hook["entry"].split()[:3] == ["statewise", "memory", "check"]
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    import re

    pattern = re.compile(hook["files"])
    for name in ("AGENTS.md", "pkg/AGENTS.md", "CLAUDE.md", ".claude/rules/a.md", "GEMINI.md",
                 ".cursor/rules/x.mdc", "package.json", "Makefile"):
        assert pattern.search(name), name
    assert not pattern.search("src/app/main.py")
    assert ACTOR == "statewise.memory"


def test_a_branch_claim_the_remote_contradicts_is_defective(workspace: Repo, home: Path, store: Store,
                                                            contract: Contract):
    (workspace.work / "AGENTS.md").write_text("`main` may be force-pushed.\n")
    import_memory(workspace.work, store, contract, home=home)
    report = check_memory(workspace.work, contract, store=store, home=home)
    finding = report.findings[0]
    assert (finding.key, finding.claimed, finding.status, finding.correct) == ("repository.protected", False,
                                                                               "defective", True)
    assert finding.recorded == "superseded"
    assert store.get_active("repository.protected", finding.scope).value is True


def test_sarif_locations_are_relative_to_the_repository_root(workspace: Repo, home: Path, contract: Contract):
    nested = workspace.work / "pkg"
    nested.mkdir()
    (nested / "AGENTS.md").write_text("Run the tests with `pytest tests/gone`.\n")
    sarif = to_sarif(check_memory(nested, contract, home=home))
    run = sarif["runs"][0]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == workspace.work.resolve().as_uri() + "/"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert "pkg/AGENTS.md" in uris


def test_an_invalid_write_back_policy_is_an_input_error(workspace: Repo, home: Path, tmp_path: Path):
    (workspace.work / "pyproject.toml").write_text('[tool.statewise]\nmemory-write-back = "sometimes"\n')
    done = CliRunner().invoke(main, ["--store", str(tmp_path / "p.db"), "memory", "check", "--apply",
                                     "--cwd", str(workspace.work), "--home", str(home)])
    assert done.exit_code == 2 and "never, ask or auto" in done.output
