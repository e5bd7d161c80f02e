"""Writing corrections back into memory files: proposals, the never/ask/auto policy, lineage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewise.cli import main
from statewise.contract import Contract
from statewise.memory import (
    WriteBackPolicy,
    apply_edits,
    check_memory,
    claude_project_folder,
    import_memory,
    propose_edits,
    read_policy,
)
from statewise.memory.writeback import EDIT_KEY
from statewise.records import RecordStatus
from statewise.store.base import Store
from tests.memory.test_check import MEMORY, RUNNING, workspace  # noqa: F401 - the fixture
from tests.verifiers.helpers import Repo


def _edits(work: Path, home: Path, contract: Contract, store: Store | None = None):
    if store is not None:
        import_memory(work, store, contract, home=home)
    return propose_edits(check_memory(work, contract, store=store, home=home))


def test_edits_replace_the_claim_with_the_correct_value(workspace: Repo, home: Path, contract: Contract):  # noqa: F811
    edits = {edit.line: edit for edit in _edits(workspace.work, home, contract)}
    assert 4 not in edits  # a version a line states is never replaced by this machine's
    assert edits[5].new == "The tests run with `npm test`."
    assert 6 not in edits and 7 not in edits  # a missing path or a branch sentence is not rewritten
    diff = edits[5].diff()
    assert diff.startswith("--- a/AGENTS.md\n+++ b/AGENTS.md\n")
    assert "-The tests run with `npm run test:unit`.\n+The tests run with `npm test`.\n" in diff


def test_never_and_ask_write_nothing_without_approval(workspace: Repo, home: Path, contract: Contract):  # noqa: F811
    agents = workspace.work / "AGENTS.md"
    edits = _edits(workspace.work, home, contract)
    never = apply_edits(edits, WriteBackPolicy.NEVER, approve=lambda edit: True)
    ask = apply_edits(edits, WriteBackPolicy.ASK)
    declined = apply_edits(edits, WriteBackPolicy.ASK, approve=lambda edit: False)
    auto = apply_edits(edits, WriteBackPolicy.AUTO)  # AGENTS.md is the developer's: never silently
    assert agents.read_text() == MEMORY
    assert not any(r.applied for r in never + ask + declined + auto)
    assert "never edited without approval" in auto[0].reason
    approved = apply_edits(edits, WriteBackPolicy.ASK, approve=lambda edit: edit.line == 5)
    assert [r.applied for r in approved] == [True]
    assert "The tests run with `npm test`." in agents.read_text().splitlines()
    assert "Older notes say the project uses Python 2.7." in agents.read_text().splitlines()


def test_auto_writes_the_agents_own_memory(workspace: Repo, home: Path, contract: Contract):  # noqa: F811
    auto = home / ".claude" / "projects" / claude_project_folder(workspace.work.resolve()) / "memory"
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text("# Notes\n\n- Run the tests with `npm run test:unit`.\n")
    edits = [e for e in _edits(workspace.work, home, contract) if e.owned_by_agent]
    results = apply_edits(edits, WriteBackPolicy.AUTO)
    assert [r.applied for r in results] == [True] and results[0].reason == "applied automatically"
    assert (auto / "MEMORY.md").read_text() == "# Notes\n\n- Run the tests with `npm test`.\n"


def test_a_line_changed_since_the_check_is_left_alone(workspace: Repo, home: Path, contract: Contract):  # noqa: F811
    edits = [e for e in _edits(workspace.work, home, contract) if e.line == 5]
    agents = workspace.work / "AGENTS.md"
    agents.write_text(MEMORY.replace("The tests run with", "Tests run with"))
    result = apply_edits(edits, WriteBackPolicy.ASK, approve=lambda edit: True)
    assert not result[0].applied and "changed" in result[0].reason
    assert agents.read_text() == MEMORY.replace("The tests run with", "Tests run with")


def test_reverting_the_repair_reverts_the_edit(workspace: Repo, home: Path, store: Store,  # noqa: F811
                                               contract: Contract):
    agents = workspace.work / "AGENTS.md"
    edits = [e for e in _edits(workspace.work, home, contract, store) if e.line == 5]
    [result] = apply_edits(edits, WriteBackPolicy.ASK, store=store, approve=lambda edit: True)
    assert result.applied and result.record_id
    edit_record = store.get(result.record_id)
    assert edit_record.key.startswith(EDIT_KEY + "[")
    payload = json.loads(edit_record.value)
    scope = edits[0].scope
    repair = store.get_active("project.test_command", scope)
    assert payload["repair"] == repair.id and repair.value == "npm test"
    # the next import sees the corrected line: nothing to do
    again = import_memory(workspace.work, store, contract, home=home)
    assert [i.action for i in again.items if i.key == "project.test_command" and i.line == 5] == ["unchanged"]
    # the developer reverts the repair: the import puts the old line back and the old record is in force
    store.revert(repair.id, reason="the developer says test:unit is coming back", actor="alice")
    import_memory(workspace.work, store, contract, home=home)
    assert agents.read_text() == MEMORY
    assert store.get(result.record_id).status is RecordStatus.RETRACTED
    assert store.get_active("project.test_command", scope).value == "npm run test:unit"
    settled = import_memory(workspace.work, store, contract, home=home)
    assert [i.action for i in settled.items if i.key == "project.test_command" and i.line == 5] == ["unchanged"]


def test_the_policy_comes_from_pyproject(tmp_path: Path):
    assert read_policy(tmp_path) is WriteBackPolicy.ASK
    (tmp_path / "pyproject.toml").write_text('[tool.statewise]\nmemory-write-back = "auto"\n')
    assert read_policy(tmp_path) is WriteBackPolicy.AUTO
    (tmp_path / "pyproject.toml").write_text('[tool.statewise]\nmemory-write-back = "always"\n')
    with pytest.raises(ValueError, match="never, ask or auto"):
        read_policy(tmp_path)


def test_cli_diff_and_apply(workspace: Repo, home: Path, tmp_path: Path):  # noqa: F811
    store = str(tmp_path / "cli.db")
    base = ["--store", store, "memory", "check", "--cwd", str(workspace.work), "--home", str(home)]
    shown = CliRunner().invoke(main, [*base, "--diff"])
    assert shown.exit_code == 1 and "+The tests run with `npm test`." in shown.output
    assert (workspace.work / "AGENTS.md").read_text() == MEMORY
    (workspace.work / "pyproject.toml").write_text('[tool.statewise]\nmemory-write-back = "never"\n')
    refused = CliRunner().invoke(main, [*base, "--apply", "--yes"])
    assert "not applied (the project's write-back policy is never)" in refused.output
    (workspace.work / "pyproject.toml").write_text('[tool.statewise]\nmemory-write-back = "ask"\n')
    applied = CliRunner().invoke(main, [*base, "--apply", "--yes", "--json"])
    data = json.loads(applied.output)
    assert {(a["line"], a["applied"]) for a in data["applied"]} == {(5, True)}
    assert "The tests run with `npm test`." in (workspace.work / "AGENTS.md").read_text()
