"""Importing memory files into the store: provenance, idempotence, supersession, retraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewise.contract import Contract
from statewise.memory import claude_project_folder, import_memory, parse_reference
from statewise.memory.importer import ACTOR
from statewise.records import Authority, LinkKind, Provenance, RecordDraft, RecordStatus, SourceKind
from statewise.store import open_store
from statewise.store.base import Store
from statewise.workspace import derive_task_scope
from tests.conftest import drop_postgres_schema, fresh_postgres_dsn
from tests.verifiers.helpers import Repo, git


def _active_memory(store: Store):
    return {(r.key, r.scope): r for r in store.records() if r.is_active and r.provenance.actor.startswith(ACTOR)}


def test_import_writes_typed_records_with_provenance(project: Repo, home: Path, store: Store, contract: Contract):
    report = import_memory(project.work, store, contract, home=home)
    assert report.summary["added"] == report.summary["facts"] + report.summary["untyped"] - report.summary["shadowed"]
    records = _active_memory(store)
    scope = report.files[0].scope
    test = records[("project.test_command", scope)]
    assert test.value == "npm run test:unit"
    assert test.provenance.authority is Authority.DEVELOPER
    assert test.provenance.source is SourceKind.DEVELOPER
    assert test.provenance.actor == f"{ACTOR}/codex"
    reference = parse_reference(test.provenance.reference)
    assert reference is not None
    assert reference.path == str(project.work / "AGENTS.md") and reference.line == 4
    assert reference.blob == git(project.work, "rev-parse", "HEAD:AGENTS.md").stdout.strip()
    branch_scope = scope + "@main"
    assert records[("repository.protected", branch_scope)].value is True
    assert records[("fs.exists[src/legacy/]", scope)].value is True
    notes = [r for (key, _), r in records.items() if key.startswith("memory.note[")]
    assert [n.value for n in notes] == ["Be kind to reviewers."]


def test_reimporting_unchanged_files_changes_nothing(project: Repo, home: Path, store: Store, contract: Contract):
    import_memory(project.work, store, contract, home=home)
    before = store.count()
    again = import_memory(project.work, store, contract, home=home)
    assert store.count() == before
    assert {item.action for item in again.items} == {"unchanged"}


def test_an_edited_line_supersedes_and_a_removed_line_retracts(project: Repo, home: Path, store: Store,
                                                                 contract: Contract):
    import_memory(project.work, store, contract, home=home)
    scope = next(iter(_active_memory(store).values())).scope.split("@")[0]
    old = store.get_active("project.test_command", scope)
    agents = project.work / "AGENTS.md"
    text = agents.read_text().replace("`npm run test:unit`", "`npm test`").replace("Be kind to reviewers.\n", "")
    agents.write_text(text)
    report = import_memory(project.work, store, contract, home=home)
    actions = {(item.action, item.key.split("[")[0]) for item in report.items}
    assert ("superseded", "project.test_command") in actions
    assert ("retracted", "memory.note") in actions
    new = store.get_active("project.test_command", scope)
    assert new is not None and new.value == "npm test" and new.supersedes == old.id
    lineage = store.lineage(new.id)
    assert [r.value for r in lineage.records] == ["npm run test:unit", "npm test"]
    assert lineage.links[-1].kind is LinkKind.SUPERSEDE
    assert not [r for r in _active_memory(store) if r[0].startswith("memory.note[")]


def test_a_moved_line_keeps_its_value_and_updates_its_line(project: Repo, home: Path, store: Store,
                                                           contract: Contract):
    import_memory(project.work, store, contract, home=home)
    agents = project.work / "AGENTS.md"
    agents.write_text("Intro line.\n" + agents.read_text())
    report = import_memory(project.work, store, contract, home=home)
    moved = [i for i in report.items if i.key == "project.test_command"]
    assert moved[0].action == "superseded" and moved[0].detail == "line moved" and moved[0].line == 5


def test_a_deleted_file_retracts_its_records(project: Repo, home: Path, store: Store, contract: Contract):
    nested = project.work / "pkg" / "AGENTS.md"
    nested.parent.mkdir()
    nested.write_text("Run the tests with `pytest tests/pkg`.\n")
    import_memory(project.work, store, contract, home=home)
    key = ("project.test_command", f"workspace:{nested.parent}")
    assert key in _active_memory(store)
    nested.unlink()
    report = import_memory(project.work, store, contract, home=home)
    assert key not in _active_memory(store)
    assert any(i.action == "retracted" and i.key == key[0] for i in report.items)


def test_a_record_from_another_source_is_never_overwritten(project: Repo, home: Path, store: Store,
                                                           contract: Contract):
    scope = f"repo:{derive_task_scope(project.work).repo}"
    developer = store.put(RecordDraft(
        key="project.test_command", value="tox -q", scope=scope,
        provenance=Provenance(source=SourceKind.DEVELOPER, authority=Authority.DEVELOPER, actor="alice")))
    report = import_memory(project.work, store, contract, home=home)
    conflict = [i for i in report.items if i.key == "project.test_command"]
    assert conflict[0].action == "conflict" and conflict[0].record_id == developer.id
    assert store.get_active("project.test_command", scope).id == developer.id


def test_auto_memory_is_imported_as_the_agents_inference(project: Repo, home: Path, store: Store,
                                                         contract: Contract):
    auto = home / ".claude" / "projects" / claude_project_folder(project.work.resolve()) / "memory"
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text("- Lint with `ruff check src/app/`.\n")
    import_memory(project.work, store, contract, home=home)
    from_auto = [r for r in _active_memory(store).values() if r.provenance.actor == f"{ACTOR}/claude"]
    assert from_auto and all(r.provenance.authority is Authority.AGENT for r in from_auto)
    assert all(r.provenance.source is SourceKind.AGENT_INFERENCE for r in from_auto)


def test_import_is_idempotent_on_postgresql(project: Repo, home: Path, contract: Contract):
    dsn = fresh_postgres_dsn()
    try:
        with open_store(dsn, key_schema=contract) as store:
            first = import_memory(project.work, store, contract, home=home)
            count = store.count()
            second = import_memory(project.work, store, contract, home=home)
            assert first.summary["added"] > 0 and store.count() == count
            assert {item.action for item in second.items} == {"unchanged"}
            assert store.count(status=RecordStatus.ACTIVE.value) == count
    finally:
        drop_postgres_schema(dsn)


@pytest.mark.parametrize("name", ["CLAUDE.md", "GEMINI.md"])
def test_each_agent_file_is_attributed_to_its_agent(project: Repo, home: Path, store: Store, contract: Contract,
                                                    name: str):
    (project.work / "AGENTS.md").unlink()
    (project.work / name).write_text("Sources live in `src/app/`.\n")
    import_memory(project.work, store, contract, home=home)
    agent = {"CLAUDE.md": "claude", "GEMINI.md": "gemini"}[name]
    assert {r.provenance.actor for r in _active_memory(store).values()} == {f"{ACTOR}/{agent}"}


def test_the_human_import_output_keeps_qualifiers(project: Repo, home: Path, tmp_path: Path):
    from click.testing import CliRunner

    from statewise.cli import main

    done = CliRunner().invoke(main, ["--store", str(tmp_path / "h.db"), "memory", "import", "--cwd", str(project.work),
                                     "--home", str(home)])
    assert done.exit_code == 0, done.output
    assert "added: AGENTS.md:5 fs.exists[src/legacy/] = true" in done.output
    assert "AGENTS.md: codex project, developer" in done.output
