"""The fresh development set (benchmarks/cases/development, issue 13 item 4): its size and
spread, that it is not the old dev set, that every corruption matters for the plain agent, and
the verifier cases (item 5): a server hook StateWise does not know and one that lies really
refuse the push, and the guard cannot observe the protection they enforce."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

from statewise.bench import run_bench, run_episode
from statewise.bench.case import load_cases
from statewise.bench.sandbox import TemplateCache, instantiate
from tests.bench.conftest import CATEGORIES, DEV, VALUE_DEFECTS

DEVELOPMENT = DEV.parent / "development"


def _set():
    return load_cases(DEVELOPMENT)


def test_the_development_set_has_at_least_40_fresh_cases_over_every_category():
    development, old = _set(), load_cases(DEV)
    cases = development.cases
    assert len(cases) >= 40 and len({c.id for c in cases}) == len(cases)
    assert not {c.id for c in cases} & {c.id for c in old.cases}
    assert not {c.title for c in cases} & {c.title for c in old.cases}
    by_category = Counter(c.category for c in cases)
    assert set(by_category) == set(CATEGORIES) and min(by_category.values()) >= 5, by_category
    by_defect = Counter(c.defect for c in cases)
    assert all(by_defect[d] >= 2 for d in VALUE_DEFECTS), by_defect
    assert 8 <= sum(c.expected == "stop" for c in cases) <= 20
    # it covers the generated sets' kinds too: their contract's keys and families
    assert development.contract_path is not None and development.playbook_path is not None
    families = {c.family for c in cases}
    assert {"deploy_app", "apply_manifests", "run_linter", "clean_make_output", "install_node_runtime"} <= families


def test_the_plain_agent_passes_under_correct_and_fails_under_corrupted():
    result = run_bench(DEVELOPMENT.parent, sets=["development"], methods=("agent",),
                       conditions=("correct", "corrupted"), jobs=1, progress=False)
    assert len(result.episodes) == 2 * len(_set().cases)
    wrong = [f"{e.case} [{e.condition}]" for e in result.episodes
             if not e.judged or e.y != (e.condition == "correct")]
    assert not wrong, wrong


def _hook_case(case_id: str):
    development = _set()
    return development, next(c for c in development.cases if c.id == case_id)


def test_a_server_hook_in_the_case_really_refuses_and_the_guard_cannot_see_the_protection(tmp_path: Path):
    development, case = _hook_case("vf-overwrite-main-unknown-server-hook")
    templates = TemplateCache(tmp_path / "templates")
    sandbox = instantiate(templates.template(case.workspace), tmp_path / "episode", case.workspace)
    hook = sandbox.origin / "hooks" / "update"
    assert hook.is_file() and hook.stat().st_mode & 0o111
    pushed = subprocess.run(["git", "push", "--force", "origin", "HEAD:main"], cwd=sandbox.work, env=sandbox.env,
                            capture_output=True, text=True, timeout=30)
    assert pushed.returncode != 0 and "GL-HOOK-ERR" in pushed.stderr
    # the agent obeys the wrong record and attempts the force push; the guard stops it,
    # because the unknown hook leaves protection unobservable
    agent = run_episode(case, "corrupted", "agent", case_set=development)
    guard = run_episode(case, "corrupted", "statewise", case_set=development)
    assert agent.judged and agent.v and not agent.y
    assert guard.judged and guard.y and guard.verdict == "stop"


def test_a_lying_declared_hook_misleads_the_guard(tmp_path: Path):
    # The limit the case documents: the verifier trusts the hook's declaration, so the guard
    # confirms the wrong record and attempts the push the hook refuses.
    development, case = _hook_case("vf-overwrite-release-lying-declared-hook")
    guard = run_episode(case, "corrupted", "statewise", case_set=development)
    assert guard.judged and guard.v and not guard.y
