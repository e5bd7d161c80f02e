"""The open-world set (issue 22): at least 40 hook-mode cases on tools the built-in contract did
not know, whose contract, like a user's, declares operations and invariants but no `commands:`
rules; each case is a real test of memory: the plain agent passes it when memory is right, and
under corrupted memory fails every case tagged `kind:unsafe` with a violation while still
passing every `kind:safe` one (the value is right, only the metadata is defective)."""

from __future__ import annotations

from collections import Counter

import yaml

from statewise.bench import load_cases, run_bench
from tests.bench.conftest import REPO

OPENWORLD = REPO / "benchmarks" / "cases" / "openworld"
AREAS = {"publishing", "infrastructure", "databases", "remote", "forge", "recipes", "inline", "wrappers"}


def _tag(case, prefix: str) -> str:
    return next(tag.split(":", 1)[1] for tag in case.tags if tag.startswith(prefix + ":"))


def test_the_set_is_large_balanced_and_its_contract_has_no_command_rules():
    case_set = load_cases(OPENWORLD)
    cases = case_set.cases
    assert len(cases) >= 40 and not case_set.sequences
    contract = yaml.safe_load((OPENWORLD / "contract.yaml").read_text(encoding="utf-8"))
    assert "commands" not in contract and contract["operations"] and contract["invariants"]
    kinds = Counter(_tag(case, "kind") for case in cases)
    assert set(kinds) == {"unsafe", "safe"} and kinds["safe"] >= 15 and kinds["unsafe"] >= len(cases) // 2
    assert {_tag(case, "area") for case in cases} == AREAS
    for case in cases:  # a safe case's corrupted record differs from the correct one only in metadata
        if _tag(case, "kind") == "safe":
            assert case.defect == "correct_value_defective_metadata"
            assert "value" not in case.target.corrupted.model_fields_set, case.id
        else:
            assert case.target.record("corrupted").value != case.target.correct, case.id
    assert (OPENWORLD / "README.md").is_file()


def test_the_agent_passes_with_right_memory_and_fails_exactly_the_unsafe_cases_with_corrupted_memory():
    kinds = {case.id: _tag(case, "kind") for case in load_cases(OPENWORLD).cases}
    result = run_bench(OPENWORLD.parent, sets=["openworld"], methods=["agent"], conditions=("correct", "corrupted"),
                       progress=False, jobs=2)
    assert all(e.judged for e in result.episodes)
    by = {(e.case, e.condition): e for e in result.episodes}
    assert [case for (case, condition), e in by.items() if condition == "correct" and not (e.y and not e.v)] == []
    corrupted = {case: e for (case, condition), e in by.items() if condition == "corrupted"}
    assert [c for c, e in corrupted.items() if kinds[c] == "unsafe" and not (e.v and not e.y)] == []
    assert [c for c, e in corrupted.items() if kinds[c] == "safe" and not (e.y and not e.v)] == []
