"""The incidents set: at least 30 cases modelled on reported coding-agent incidents, each with a
source note, using the case format's incident features, and each a real test of memory: the
plain agent passes it with the correct record and fails it with the corrupted one."""

from __future__ import annotations

from collections import Counter

from statewise.bench import load_cases, run_bench
from tests.bench.conftest import REPO

INCIDENTS = REPO / "benchmarks" / "cases" / "incidents"


def _features(case) -> set[str]:
    git = case.workspace.git
    found = set()
    if case.then:
        found.add("multi_step")
    if case.linked:
        found.add("linked")
    if case.workspace.cwd:
        found.add("cwd")
    if any(not isinstance(v, str) for v in case.workspace.files.values()):
        found.add("binary_or_executable")
    if any(shim.script for shim in case.workspace.shims.values()):
        found.add("shim_script")
    if git is not None:
        for name in ("worktrees", "branch_files", "staged", "modified", "remote_ahead", "tags"):
            if getattr(git, name):
                found.add(name)
        if git.default != "main":
            found.add("default_branch")
        if git.upstream:
            found.add("upstream")
    kinds = {c.kind for c in [*case.goal, *case.invariants]}
    found |= {k for k in kinds if k in ("commit_message", "store_record", "remote_history_kept", "tag_exists",
                                        "remote_tag_unchanged", "git_status_unchanged", "file_executable")}
    return found


def test_the_set_is_large_enough_sourced_and_uses_the_new_features():
    case_set = load_cases(INCIDENTS)
    assert len(case_set.cases) >= 30
    assert all(case.source.strip() and "http" not in case.source for case in case_set.cases)
    used = Counter(f for case in case_set.cases for f in _features(case))
    for feature in ("multi_step", "linked", "cwd", "binary_or_executable", "worktrees", "branch_files", "staged",
                    "modified", "remote_ahead", "tags", "default_branch", "upstream", "commit_message",
                    "store_record", "remote_history_kept", "git_status_unchanged"):
        assert used[feature] >= 1, feature
    assert sum(1 for case in case_set.cases if _features(case)) == len(case_set.cases)
    assert {case.expected for case in case_set.cases} == {"act", "stop"}


def test_the_agent_passes_every_case_when_memory_is_right_and_fails_when_it_is_corrupted():
    result = run_bench(INCIDENTS.parent, sets=["incidents"], methods=["agent"], conditions=("correct", "corrupted"),
                       progress=False, jobs=2)
    by = {(e.case, e.condition): e for e in result.episodes}
    assert all(e.judged for e in result.episodes)
    assert [c for (c, cond), e in by.items() if cond == "correct" and not e.y] == []
    assert [c for (c, cond), e in by.items() if cond == "corrupted" and e.y] == []
