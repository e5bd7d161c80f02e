"""Which jobs a run has: the default (primary set, agent and statewise), --all, --only, and the
RQ6 transfer tags from transfer.json (and a malformed transfer.json)."""

from __future__ import annotations

import json

import pytest

from statewise.bench import load_cases, run_bench
from statewise.bench.methods import BUNDLED_METHODS, METHODS
from statewise.bench.runner import (
    ABLATIONS,
    DEFAULT_METHODS,
    VARIANTS,
    CaseTransfer,
    TransferError,
    baseline_names,
    load_transfer,
    plan_methods,
    select_jobs,
    set_folders,
)
from statewise.errors import InputError

from .conftest import DEV, minimal_case, write_case

CASES = DEV.parent
SETS = ["beyond", "defective_context", "dev", "development", "erroneous", "incidents", "openworld", "planners", "primary",
        "sequences"]


def transfer_entry(*new: str) -> dict:
    unseen = {d: d in new for d in ("repository", "operation", "state_type", "state_action")}
    return {"unseen": unseen, "any_unseen": bool(new), "fully_unseen": len(new) == 4}


def write_transfer(folder, cases: dict, **top) -> None:
    data = {"format": "statewise-transfer/1", "cases": cases, **top}
    (folder / "transfer.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def two_sets(tmp_path):
    """A cases directory with a primary set (two cases) and another set (one case)."""
    write_case(tmp_path / "primary", minimal_case(id="push-a"))
    write_case(tmp_path / "primary", minimal_case(id="push-b"))
    write_case(tmp_path / "other", minimal_case(id="push-a"))
    return tmp_path


def test_the_repository_has_the_sets_the_plan_expects():
    assert [f.name for f in set_folders(CASES)] == SETS


def test_the_default_run_is_the_primary_set_with_agent_and_statewise():
    assert plan_methods(SETS) == {"primary": ("agent", "statewise")}
    assert DEFAULT_METHODS == ("agent", "statewise")
    # explicit options choose; ids given without sets are looked up in every set
    assert plan_methods(SETS, sets=["dev", "beyond"], methods=["statewise"]) == {"dev": ("statewise",),
                                                                                  "beyond": ("statewise",)}
    assert list(plan_methods(SETS, cases=["git-push-stale-protection"])) == SETS
    # a cases directory without a primary set runs what it has
    assert list(plan_methods(["a", "b"])) == ["a", "b"]


def test_unknown_sets_and_methods_are_refused():
    with pytest.raises(ValueError, match="no case set nope; sets here: beyond"):
        plan_methods(SETS, sets=["nope"])
    with pytest.raises(ValueError, match="unknown method"):
        plan_methods(SETS, methods=["statewise", "nonsense"])


@pytest.fixture
def bundled_baselines():
    """The bundled baselines registered (other test modules unregister them when they finish),
    and the registry as it was afterwards."""
    from statewise.bench import baselines

    before = {name for name in baselines.BASELINES if dict.__contains__(METHODS, name)}
    baselines.register(replace=True)
    yield
    for name in set(baselines.BASELINES) - before:
        METHODS.pop(name, None)


def test_all_runs_every_set_with_the_variants_and_the_baselines_and_ablations_on_primary_and_the_sequences(
        bundled_baselines):
    plan = plan_methods(SETS, everything=True)
    full = ("primary", "sequences")
    assert list(plan) == [*full, *(name for name in SETS if name not in full)]  # the full comparisons first
    baselines = baseline_names()
    assert set(BUNDLED_METHODS) - set(VARIANTS) <= set(baselines)  # hook is bundled like the baselines, a variant
    assert not {"agent", "statewise", *VARIANTS} & set(baselines) and not any(b.startswith("no_") for b in baselines)
    assert VARIANTS == ("hook", "paper", "statewise_basis", "statewise_core")
    assert plan["primary"] == plan["sequences"] == ("agent", "statewise", *VARIANTS, *baselines, *ABLATIONS)
    assert len(ABLATIONS) == 6 and "no_gate" in ABLATIONS and "no_typed_grounding" in ABLATIONS
    assert all(plan[name] == ("agent", "statewise", *VARIANTS) for name in SETS if name not in full)


def test_all_cannot_be_combined_with_sets_or_methods():
    with pytest.raises(ValueError, match="cannot be combined with --sets"):
        plan_methods(SETS, everything=True, sets=["dev"])
    with pytest.raises(ValueError, match="cannot be combined with --sets or --methods"):
        plan_methods(SETS, everything=True, sets=["dev"], methods=["agent"])


def test_the_all_job_plan_over_the_real_sets(bundled_baselines):
    """The --all plan without running it: every job of every set, baselines and ablations on
    the primary set and the sequences only, the conditions each scenario has."""
    plan = plan_methods(SETS, everything=True)
    case_sets = [load_cases(CASES / name) for name in plan]
    jobs = select_jobs(case_sets, plan, ("correct", "corrupted", "removed"))
    keys = [job.key for job in jobs]
    assert len(keys) == len(set(keys))
    by_set = {case_set.name: case_set for case_set in case_sets}
    for name, methods in plan.items():
        expected = sum(len(s.conditions()) for s in by_set[name].scenarios) * len(methods)
        assert sum(1 for k in keys if k[0] == name) == expected, name
    extra = {m for k in keys if k[0] not in ("primary", "sequences") for m in [k[3]]}
    assert extra == {"agent", "statewise", *VARIANTS}
    assert {k[3] for k in keys if k[0] == "primary"} == set(plan["primary"])
    assert {k[3] for k in keys if k[0] == "sequences"} == set(plan["sequences"])
    # a quick --all keeps a few scenarios per set and every method of the set
    quick = select_jobs(case_sets, plan, ("corrupted",), quick=True)
    assert {job.case_set.name for job in quick} == set(SETS)
    assert len(quick) < len(jobs) / 10


def test_select_jobs_tags_the_primary_cases_from_the_transfer_split(two_sets):
    write_transfer(two_sets, {"push-a": transfer_entry(), "push-b": transfer_entry("repository", "state_action")})
    transfer = load_transfer(two_sets / "transfer.json")
    assert transfer is not None and transfer.source == str(two_sets / "transfer.json")
    plan = {"primary": ("agent",), "other": ("agent",)}
    case_sets = [load_cases(two_sets / name) for name in plan]
    jobs = select_jobs(case_sets, plan, ("corrupted",), transfer=transfer)
    tags = {(job.case_set.name, job.scenario.id): job.tags for job in jobs}
    assert tags == {("primary", "push-a"): ("seen",), ("primary", "push-b"): ("unseen", "new_repository",
                                                                              "new_state_action"),
                    ("other", "push-a"): ()}  # the split is the primary set's only
    assert CaseTransfer(unseen=("repository", "operation", "state_type", "state_action"),
                        fully_unseen=True).tags == ("unseen", "fully_unseen", "new_repository", "new_operation",
                                                    "new_state_type", "new_state_action")


def test_a_run_without_sets_runs_the_primary_set_and_carries_the_transfer_tags(two_sets):
    write_transfer(two_sets, {"push-a": transfer_entry(), "push-b": transfer_entry("operation")})
    result = run_bench(two_sets, methods=["agent", "statewise"], conditions=["corrupted"], jobs=1, progress=False)
    assert result.sets == ["primary"] and result.methods_by_set == {"primary": ["agent", "statewise"]}
    assert result.transfer == str(two_sets / "transfer.json") and result.transfer_unlisted == []
    tags = {(e.case, e.method): e.tags for e in result.episodes}
    assert tags[("push-a", "agent")] == ["seen"] and tags[("push-b", "statewise")] == ["unseen", "new_operation"]
    assert all(e.judged for e in result.episodes)
    rows = {(r["group"], r["method"]): r for r in result.metrics()["transfer"]}
    assert set(rows) == {(g, m) for g in ("seen", "unseen", "new_operation") for m in ("agent", "statewise")}
    assert rows[("seen", "statewise")]["cases"] == 1 and rows[("seen", "statewise")]["set"] == "primary"
    assert rows[("seen", "agent")]["OC"] == 0.0  # the unguarded agent trusts the stale record
    data = result.to_dict(include_reports=False)
    assert data["sets"] == ["primary"] and data["methods_by_set"] == {"primary": ["agent", "statewise"]}
    assert data["metrics"]["transfer"] == result.metrics()["transfer"]


def test_a_missing_transfer_file_means_no_split_and_unlisted_cases_are_named(two_sets):
    assert load_transfer(two_sets / "transfer.json") is None
    result = run_bench(two_sets, methods=["agent"], conditions=["corrupted"], jobs=1, progress=False)
    assert result.transfer is None and all(e.tags == [] for e in result.episodes)
    assert result.metrics()["transfer"] == []
    write_transfer(two_sets, {"push-a": transfer_entry("repository")})
    result = run_bench(two_sets, methods=["agent"], conditions=["corrupted"], jobs=1, progress=False)
    assert result.transfer_unlisted == ["push-b"]
    assert [e.tags for e in result.episodes if e.case == "push-b"] == [["transfer_unlisted"]]
    # the unlisted case is in no group (it is not counted as seen)
    assert {(r["group"], r["cases"]) for r in result.metrics()["transfer"]} == {("unseen", 1), ("new_repository", 1)}


@pytest.mark.parametrize(("content", "field", "problem"), [
    ("{", "", "not valid JSON"),
    ("[]", "", "expected a JSON object"),
    ({"format": "statewise-transfer/2", "cases": {}}, "format", "expected 'statewise-transfer/1'"),
    ({"format": "statewise-transfer/1"}, "cases", "the field is missing"),
    ({"cases": {"push-a": []}}, "cases.push-a", "expected an object"),
    ({"cases": {"push-a": {"any_unseen": False, "fully_unseen": False}}}, "cases.push-a.unseen", "expected an object"),
    ({"cases": {"push-a": {**transfer_entry(), "unseen": {"repository": False}}}}, "cases.push-a.unseen.operation",
     "required field is missing"),
    ({"cases": {"push-a": {**transfer_entry(), "unseen": {**transfer_entry()["unseen"], "repository": "no"}}}},
     "cases.push-a.unseen.repository", "expected true or false, got 'no'"),
    ({"cases": {"push-a": {**transfer_entry(), "unseen": {**transfer_entry()["unseen"], "tool": True}}}},
     "cases.push-a.unseen.tool", "unknown dimension"),
    ({"cases": {"push-a": {"unseen": transfer_entry()["unseen"], "fully_unseen": False}}},
     "cases.push-a.any_unseen", "required field is missing"),
    ({"cases": {"push-a": {**transfer_entry("operation"), "any_unseen": False}}}, "cases.push-a.any_unseen",
     "is false but unseen says true"),
])
def test_a_malformed_transfer_file_is_one_error_naming_the_file_and_the_field(two_sets, content, field, problem):
    path = two_sets / "transfer.json"
    if isinstance(content, dict):
        content = json.dumps({"format": "statewise-transfer/1", **content})
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TransferError) as caught:
        load_transfer(path)
    error = caught.value
    assert isinstance(error, InputError)
    assert (error.source, error.field) == (str(path), field) and problem in error.problem
    assert str(error).startswith(f"{path}: {field + ': ' if field else ''}")


def test_a_run_with_a_malformed_transfer_file_stops_before_it_starts(two_sets):
    (two_sets / "transfer.json").write_text(json.dumps({"format": "statewise-transfer/1", "cases": {
        "push-a": {**transfer_entry(), "fully_unseen": "no"}}}), encoding="utf-8")
    with pytest.raises(TransferError, match=r"transfer.json: cases.push-a.fully_unseen: expected true or false"):
        run_bench(two_sets, methods=["agent"], progress=False)
    # a run without the primary set does not read it
    assert run_bench(two_sets, sets=["other"], methods=["agent"], conditions=["corrupted"], jobs=1,
                     progress=False).transfer is None


def test_ids_that_no_chosen_set_has_are_refused(two_sets):
    with pytest.raises(ValueError, match="no case or sequence nope in the set"):
        run_bench(two_sets, cases=["push-a", "nope"], progress=False)
    with pytest.raises(ValueError, match="no case set"):
        run_bench(two_sets, sets=["absent"], progress=False)
