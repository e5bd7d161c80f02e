"""Memory sequences: the wrong record is a memory-file line, the correction must survive resets."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewise.bench.memory_sequences import (
    AUTO_MEMORY,
    MemorySequence,
    load_memory_sequences,
    render_table,
    run_memory_sequence,
    summarize,
)
from statewise.contract import builtin_contract
from statewise.memory.discovery import MemoryFile
from statewise.memory.extract import extract_text
from statewise.records import Authority, SourceKind

CASES = Path(__file__).resolve().parents[2] / "benchmarks" / "cases" / "memory_sequences"


@pytest.fixture(scope="module")
def loaded() -> tuple[dict[str, MemorySequence], object]:
    cases, playbook = load_memory_sequences(CASES)
    return {c.id: c for c in cases}, playbook


def test_the_set_has_at_least_twelve_four_task_sequences(loaded) -> None:
    cases, _ = loaded
    assert len(cases) >= 12
    assert all(len(c.tasks) == 4 for c in cases.values())
    files = {c.memory.file if c.memory.file == AUTO_MEMORY else Path(c.memory.file).name for c in cases.values()}
    assert {"AGENTS.md", "CLAUDE.md", "GEMINI.md", AUTO_MEMORY} <= files


def test_every_labelled_line_states_the_wrong_value(loaded, tmp_path) -> None:
    """The label is checked against the extractor: the line it names types to the wrong value."""
    cases, _ = loaded
    contract = builtin_contract()
    for case in cases.values():
        auto = case.memory.file == AUTO_MEMORY
        file = MemoryFile(path=tmp_path / "MEMORY.md", agent="claude" if auto else "codex",
                          kind="auto" if auto else "project", authority=Authority.AGENT if auto else Authority.DEVELOPER,
                          source=SourceKind.AGENT_INFERENCE if auto else SourceKind.DEVELOPER, scope="repo:example",
                          base=tmp_path, relpath="MEMORY.md")
        lines = extract_text(case.memory.text, file, contract, repo="example")
        facts = [(line.number, fact.key, fact.value) for line in lines for fact in line.facts]
        assert (case.target.line, case.target.key, case.target.wrong) in facts, (case.id, facts)
        assert case.target.wrong != case.target.correct


def test_agent_repeats_the_stale_line_and_auto_write_back_carries_the_fix(loaded) -> None:
    cases, playbook = loaded
    case = cases["ms-01-agents-npm-script-renamed"]
    agent = run_memory_sequence(case, "agent", playbook=playbook)
    assert [e.judged for e in agent] == [True] * 4
    assert [e.y for e in agent] == [False] * 4
    assert all(c["argv"] == ["npm", "run", "test:unit"] for e in agent for c in e.commands)

    auto = run_memory_sequence(case, "auto", playbook=playbook)
    assert [e.y for e in auto] == [True] * 4
    # The developer approved the edit (memory.edit): later sessions read the fixed line.
    assert auto[0].report["edits"][0]["applied"] is True
    assert auto[0].report["edits"][0]["new"] == "- The tests run with `npm test`."
    assert [e.report["via_file"] for e in auto] == [False, True, True, True]
    assert [e.repaired_retrieved for e in auto] == [None, True, True, True]
    assert [e.approvals for e in auto] == [1, 0, 0, 0]  # the developer was asked once, for their file


def test_never_keeps_the_file_and_the_injection_alone_carries_the_fix(loaded) -> None:
    cases, playbook = loaded
    case = cases["ms-01-agents-npm-script-renamed"]
    never = run_memory_sequence(case, "never", playbook=playbook)
    assert [e.y for e in never] == [True] * 4
    assert [e.report["via_file"] for e in never] == [False] * 4
    assert all(e.report["via_injection"] for e in never)
    assert "npm run test:unit" in never[3].report["injected"]  # the wrong line is still named


def test_auto_does_not_edit_a_developer_file_without_approval(loaded) -> None:
    cases, playbook = loaded
    case = cases["ms-02-claude-make-target-renamed"]
    assert "memory.edit" not in case.developer.approves
    auto = run_memory_sequence(case, "auto", playbook=playbook)
    edits = auto[0].report["edits"]
    assert edits and not any(e["applied"] for e in edits)
    assert [e.report["via_file"] for e in auto] == [False] * 4


def test_auto_rewrites_the_agents_own_memory_silently(loaded) -> None:
    cases, playbook = loaded
    case = cases["ms-13-auto-memory-make-target"]
    assert case.memory.file == AUTO_MEMORY and case.developer.approves == ["test.run"]
    auto = run_memory_sequence(case, "auto", playbook=playbook)
    assert auto[0].report["edits"][0]["reason"] == "applied automatically"
    assert auto[0].approvals == 0  # the agent's own memory: nobody is asked
    assert [e.report["via_file"] for e in auto] == [False, True, True, True]
    assert all(e.y for e in auto)


def test_summary_computes_afs_and_r_from_the_episodes() -> None:
    def ep(seq: str, step: int, y: bool, seen: bool | None, via_file: bool = False) -> dict:
        return {"method": "never", "sequence": seq, "step": step, "judged": True, "y": y, "questions": 0,
                "approvals": 1 if step == 0 else 0,
                "repaired_retrieved": seen, "report": {"via_file": via_file, "via_injection": bool(seen)}}

    episodes = [ep("a", 0, True, None), ep("a", 1, True, True), ep("a", 2, True, True), ep("a", 3, True, True),
                ep("b", 0, False, None), ep("b", 1, True, True), ep("b", 2, False, False), ep("b", 3, True, True)]
    [row] = summarize(episodes)
    assert row["sequences"] == 2
    assert row["T1"] == 0.5
    assert row["T2+"] == 5 / 6
    assert row["AFS"] == 0.5
    assert row["R"] == 5 / 6
    assert row["via_file"] == 0.0
    table = render_table([row])
    assert row["IC"] == 2 / 8
    assert "| never | 2 | 50.0 | 83.3 | 50.0 | 83.3 | 0.0 | 83.3 | 0.25 | 0 |" in table


def test_only_the_written_file_reaches_later_sessions_without_statewise(loaded) -> None:
    cases, playbook = loaded
    case = cases["ms-01-agents-npm-script-renamed"]
    never = run_memory_sequence(case, "never_then_bare", playbook=playbook)
    assert [e.y for e in never] == [True, False, False, False]
    assert [e.report["injected"] != "" for e in never] == [True, False, False, False]
    auto = run_memory_sequence(case, "auto_then_bare", playbook=playbook)
    assert [e.y for e in auto] == [True] * 4
    assert [e.report["via_file"] for e in auto] == [False, True, True, True]
