"""The development set (benchmarks/cases/dev, paper section 5.1: 40 development cases): its
size and spread, that it uses only the built-in `coding` contract, that every case names its
repository layout and operation for the transfer split (RQ6), and that every corruption
matters: the plain agent succeeds under `correct` and fails under `corrupted`."""

from __future__ import annotations

import fnmatch
from collections import Counter

from statewise.bench import run_bench
from statewise.contract import builtin_contract
from tests.bench.conftest import CATEGORIES, DEV, VALUE_DEFECTS, case_generator



def _tags(case) -> dict[str, str]:
    return dict(tag.split(":", 1) for tag in case.tags if ":" in tag)


def test_the_dev_set_has_40_single_task_cases_spread_over_categories_and_defects(dev_set):
    cases = dev_set.cases
    assert len(cases) == 40
    assert len(dev_set.sequences) == 2
    assert len({c.id for c in cases}) == 40
    by_category = Counter(c.category for c in cases)
    assert set(by_category) == set(CATEGORIES) and min(by_category.values()) >= 5
    by_defect = Counter(c.defect for c in cases)
    assert all(by_defect[d] >= 5 for d in VALUE_DEFECTS), by_defect
    assert set(by_defect) <= set(VALUE_DEFECTS) | {"correct_value_defective_metadata"}
    stops = sum(c.expected == "stop" for c in cases)
    assert 5 <= stops <= 10  # about one in six, like the paper's sets


def test_the_dev_set_uses_only_the_builtin_contract(dev_set):
    assert dev_set.contract_path is None
    coding = builtin_contract()
    for case in dev_set.cases:
        for key in [case.target.key, *case.critical, *(r.key for r in case.store)]:
            assert coding.state_spec(key.split("[")[0]) is not None, (case.id, key)


def test_every_dev_case_names_its_layout_and_operation(dev_set):
    generator = case_generator()
    coding = builtin_contract()
    repositories, operations = generator.dev_case_maps(DEV)
    assert set(repositories) == {c.id for c in dev_set.cases} == set(operations)
    for case in dev_set.cases:
        tags = _tags(case)
        assert repositories[case.id] == tags["repo"] and operations[case.id] == tags["op"]
        assert coding.operation(tags["op"]) is not None, case.id
        layout = generator.REPOS[tags["repo"]]
        files = list(case.workspace.files)
        assert all(any(fnmatch.fnmatchcase(f, glob) for f in files) for glob in layout.identifying()), case.id


def test_the_plain_agent_passes_under_correct_and_fails_under_corrupted(dev_set):
    result = run_bench(DEV.parent, sets=["dev"], methods=("agent",), conditions=("correct", "corrupted"), jobs=1,
                       progress=False)
    singles = [e for e in result.episodes if not e.sequence]
    assert len(singles) == 80
    defects = {c.id: c.defect for c in dev_set.cases}
    wrong = []
    for episode in singles:
        assert episode.judged, (episode.case, episode.condition, episode.unjudged_reason)
        # only the metadata of a correct_value_defective_metadata target is defective
        should_pass = episode.condition == "correct" or defects[episode.case] == "correct_value_defective_metadata"
        if episode.y != should_pass:
            wrong.append(f"{episode.case} [{episode.condition}]")
    assert not wrong, wrong
