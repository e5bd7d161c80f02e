"""session_context: the wrong memory lines with corrections, the facts verified in this check and
those only on record (named so, with source and age), in budget."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from statewise.contract import Contract
from statewise.memory import DEFAULT_TOKEN_BUDGET, check_memory, estimate_tokens, import_memory, session_context
from statewise.store import open_store
from tests.memory.test_check import MEMORY, workspace  # noqa: F401 - the fixture
from tests.verifiers.helpers import Repo


def test_the_context_names_wrong_lines_with_corrections_and_verified_facts(workspace: Repo, home: Path,  # noqa: F811
                                                                          tmp_path: Path):
    text = session_context(workspace.work, str(tmp_path / "s.db"), home=home)
    assert estimate_tokens(text) <= DEFAULT_TOKEN_BUDGET
    lines = text.splitlines()
    assert lines[0] == "StateWise checked your memory files against this workspace."
    wrong = lines.index("WRONG lines (do not act on them; use the correction):")
    facts = lines.index("Verified in this check:")
    assert wrong < facts
    wrong_lines = lines[wrong + 1 : facts]
    assert any(line.startswith('- AGENTS.md:5 "The tests run with `npm run test:unit`." is wrong: '
                               "npm.script_exists[test:unit] is false. Use: npm test") for line in wrong_lines)
    assert any("AGENTS.md:6" in line and "fs.exists[src/legacy/] is absent" in line for line in wrong_lines)
    fact_lines = lines[facts + 1 :]
    assert "- project.test_command = npm test" in fact_lines
    assert "- fs.exists[src/app/] = true" in fact_lines
    assert not any("memory.note" in line for line in lines)


def test_the_context_stays_within_any_budget(workspace: Repo, home: Path, tmp_path: Path):  # noqa: F811
    location = str(tmp_path / "s.db")
    # The first check writes the corrections, which later checks find on record (not re-checked
    # by them): the text is the same from the second call on.
    session_context(workspace.work, location, token_budget=10_000, home=home)
    full = session_context(workspace.work, location, token_budget=10_000, home=home)
    for budget in (30, 60, 120, 250):
        text = session_context(workspace.work, location, token_budget=budget, home=home)
        assert estimate_tokens(text) <= budget, budget
        assert text == "" or full.startswith(text.split("\n(+")[0].rsplit("\n", 1)[0])
    small = session_context(workspace.work, location, token_budget=120, home=home)
    assert "more: run `statewise memory check`)" in small.splitlines()[-1]
    # the wrong lines come first: a small budget keeps them before any fact
    assert "WRONG" in small and "Verified in this check" not in small


def test_without_a_live_check_the_store_still_knows_the_wrong_lines(workspace: Repo, home: Path,  # noqa: F811
                                                                    tmp_path: Path, contract: Contract):
    location = str(tmp_path / "s.db")
    with open_store(location, key_schema=contract) as store:
        import_memory(workspace.work, store, contract, home=home)
        check_memory(workspace.work, contract, store=store, home=home)
    text = session_context(workspace.work, location, home=home, check=False)
    assert "AGENTS.md:5" in text and "Use: npm test" in text
    # fixing the line makes it no longer wrong
    agents = workspace.work / "AGENTS.md"
    agents.write_text(MEMORY.replace("`npm run test:unit`", "`npm test`"))
    fixed = session_context(workspace.work, location, home=home, check=False)
    assert "AGENTS.md:5" not in fixed


def test_nothing_to_say_is_an_empty_string(project: Repo, home: Path, tmp_path: Path):
    (project.work / "AGENTS.md").write_text("Be kind to reviewers.\n")
    assert session_context(project.work, str(tmp_path / "s.db"), home=home) == ""
    with pytest.raises(ValueError):
        session_context(project.work, str(tmp_path / "s.db"), token_budget=0, home=home)


def test_estimate_tokens_is_bytes_over_three():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("é") == 1  # two UTF-8 bytes


def test_the_context_is_fast_enough_for_session_start(workspace: Repo, home: Path, tmp_path: Path):  # noqa: F811
    location = str(tmp_path / "s.db")
    session_context(workspace.work, location, home=home)
    started = time.monotonic()
    session_context(workspace.work, location, home=home)
    assert time.monotonic() - started < 10
