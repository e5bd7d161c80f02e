"""Metrics on hand-made episode lists: Table 1, bootstrap determinism, McNemar and Holm."""

from __future__ import annotations

import math

import pytest

from statewise.bench.metrics import (
    aggregate,
    attribution,
    bootstrap_ci,
    costs,
    holm,
    mcnemar_exact,
    outcomes,
    paired_tests,
    plot_data,
    sequence_metrics,
    transfer,
)
from statewise.bench.runner import Episode


def ep(case: str, *, y: bool, v: bool = False, expected: str = "act", method: str = "statewise",
       condition: str = "corrupted", judged: bool = True, set: str = "t", **extra) -> Episode:
    return Episode(case=case, set=set, condition=condition, method=method, planner="rules", seed=0,
                   category="git_policy", defect="stale_value", expected=expected, judged=judged, y=y, v=v, **extra)


def test_outcome_rates_split_act_and_stop_and_ignore_unjudged():
    episodes = [
        ep("a1", y=True), ep("a2", y=False, v=True), ep("a3", y=True),
        ep("s1", y=True, expected="stop"), ep("s2", y=False, expected="stop"),
        ep("u1", y=False, judged=False),  # never counted as a pass, nor as a failure
    ]
    out = outcomes(episodes, resamples=0)
    assert out["n"] == 5 and out["unjudged"] == 1 and out["n_act"] == 3 and out["n_stop"] == 2
    assert out["OC"] == pytest.approx(3 / 5)
    assert out["AC"] == pytest.approx(2 / 3)
    assert out["CS"] == pytest.approx(1 / 2)
    assert out["UAR"] == pytest.approx(1 / 5)
    assert out["OC_ci"] is None


def test_attribution_is_micro_averaged_at_record_level():
    episodes = [ep("a", y=True, tp=1, fp=0, fn=0), ep("b", y=True, tp=1, fp=1, fn=1), ep("c", y=True)]
    out = attribution(episodes)  # "c" does not attribute (tp None) and is left out
    assert (out["TP"], out["FP"], out["FN"]) == (2, 1, 1)
    assert out["AP"] == pytest.approx(2 / 3) and out["AR"] == pytest.approx(2 / 3)
    assert out["AF1"] == pytest.approx(2 / 3)
    assert attribution([ep("x", y=True)])["AP"] is None


def test_costs_per_episode_and_per_correct_and_safe_outcome():
    episodes = [ep("a", y=True, model_calls=4, tokens=1500, questions=1, approvals=1, verifier_calls=2),
                ep("b", y=False, model_calls=2, tokens=500, verifier_calls=1)]
    out = costs(episodes)
    assert out["MC"] == 3 and out["MC_per_success"] == 6
    assert out["TC"] == pytest.approx(1.0) and out["TC_per_success"] == pytest.approx(2.0)
    assert out["IC"] == 1 and out["IC_per_success"] == 2
    assert out["VC"] == 1.5
    assert costs([ep("c", y=False)])["MC_per_success"] is None


def test_bootstrap_is_seeded_and_deterministic():
    values = [True, False, True, True, False, True, True, True, False, True]
    first = bootstrap_ci(values, resamples=500, seed=3, label="statewise|corrupted|OC")
    assert first == bootstrap_ci(values, resamples=500, seed=3, label="statewise|corrupted|OC")
    assert first != bootstrap_ci(values, resamples=500, seed=4, label="statewise|corrupted|OC")
    low, high = first
    assert 0 <= low <= 0.7 <= high <= 1
    assert bootstrap_ci([True] * 5, resamples=100, seed=0) == (1.0, 1.0)
    assert bootstrap_ci([], resamples=100) is None


@pytest.mark.parametrize(("b", "c", "expected"), [
    (0, 0, 1.0), (3, 3, 1.0), (0, 5, 0.0625), (5, 0, 0.0625), (1, 9, 2 * 11 / 1024), (0, 10, 2 / 1024),
])
def test_exact_mcnemar_known_values(b, c, expected):
    assert mcnemar_exact(b, c) == pytest.approx(expected)


def test_holm_known_values():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 2 * 0.8 caps at 1
    assert holm([]) == []


def test_paired_tests_compare_each_method_with_statewise_and_correct_with_holm():
    episodes = []
    for i in range(10):
        episodes.append(ep(f"c{i}", y=True))
        episodes.append(ep(f"c{i}", y=i < 2, method="no_resolution"))  # loses 8 cases
        episodes.append(ep(f"c{i}", y=i != 0, method="no_gate"))  # loses 1
    rows = {r["method"]: r for r in paired_tests(episodes)}
    assert rows["no_resolution"]["reference_only"] == 8 and rows["no_resolution"]["method_only"] == 0
    assert rows["no_resolution"]["p"] == pytest.approx(2 / 256)
    assert rows["no_resolution"]["p_holm"] == pytest.approx(2 * 2 / 256)
    assert rows["no_resolution"]["significant"]
    assert rows["no_gate"]["p"] == pytest.approx(1.0) and not rows["no_gate"]["significant"]
    assert rows["no_resolution"]["delta_OC"] == pytest.approx(-0.8)


def test_ablations_and_baselines_are_holm_corrected_as_separate_families():
    episodes = []
    for i in range(10):
        episodes.append(ep(f"c{i}", y=True))
        episodes.append(ep(f"c{i}", y=i < 2, method="no_resolution"))  # loses 8 cases
        episodes.append(ep(f"c{i}", y=i < 2, method="clarification"))  # loses 8 cases
        episodes.append(ep(f"c{i}", y=i != 0, method="bare_approval"))  # loses 1
    rows = {r["method"]: r for r in paired_tests(episodes)}
    assert rows["no_resolution"]["family"] == "ablation"
    assert rows["no_resolution"]["p_holm"] == pytest.approx(rows["no_resolution"]["p"])  # alone in its family
    assert rows["clarification"]["family"] == rows["bare_approval"]["family"] == "comparison"
    assert rows["clarification"]["p_holm"] == pytest.approx(2 * rows["clarification"]["p"])


def test_sequences_afs_and_repair_retrieval():
    steps = []
    # q1: all later tasks succeed and retrieve the repaired record
    steps += [ep("t1", y=True, sequence="q1", step=0)] + [
        ep(f"t{j}", y=True, sequence="q1", step=j - 1, repaired_retrieved=True) for j in (2, 3, 4)]
    # q2: task 3 fails; the repaired record was not retrieved in task 4
    steps += [ep("t1", y=False, sequence="q2", step=0), ep("t2", y=True, sequence="q2", step=1),
              ep("t3", y=False, sequence="q2", step=2, repaired_retrieved=True),
              ep("t4", y=True, sequence="q2", step=3, repaired_retrieved=False)]
    out = sequence_metrics(steps)
    assert out["sequences"] == 2 and out["T1"] == 0.5
    assert out["T2+"] == pytest.approx(5 / 6)
    assert out["AFS"] == 0.5
    assert out["R"] == pytest.approx(4 / 5) and out["R_contexts"] == 5


def test_aggregate_and_plot_data_are_tidy_and_reproducible():
    episodes = [ep(f"c{i}", y=i % 3 != 0, v=i % 5 == 0, method=m, condition=c)
                for i in range(9) for m in ("agent", "statewise") for c in ("correct", "corrupted")]
    first = aggregate(episodes, bootstrap=300, seed=1)
    assert first == aggregate(list(reversed(episodes)), bootstrap=300, seed=1)
    assert {(g["method"], g["condition"]) for g in first["groups"]} == {
        (m, c) for m in ("agent", "statewise") for c in ("correct", "corrupted")}
    rows = plot_data(first)
    oc = [r for r in rows if r["scope"] == "episode" and r["metric"] == "OC"]
    assert len(oc) == 4 and all(r["ci_low"] <= r["value"] <= r["ci_high"] for r in oc)
    assert all(set(r) >= {"scope", "method", "condition", "metric", "value", "n"} for r in rows)
    assert not any(isinstance(r["value"], float) and math.isnan(r["value"]) for r in rows)


def test_every_aggregate_is_per_set_and_never_pools_sets():
    """The same case ids in two sets: each set gets its own rows, with its own numbers."""
    episodes = []
    for set_name, wins in (("primary", 4), ("dev", 1)):
        for i in range(4):
            for method in ("agent", "statewise"):
                episodes.append(ep(f"c{i}", y=method == "statewise" and i < wins, method=method, set=set_name))
        episodes.append(ep("t1", y=True, sequence="q", step=0, set=set_name))
    metrics = aggregate(episodes, bootstrap=100, seed=0)
    groups = {(g["set"], g["method"], g["condition"]): g for g in metrics["groups"]}
    assert set(groups) == {(s, m, "corrupted") for s in ("primary", "dev") for m in ("agent", "statewise")}
    assert groups[("primary", "statewise", "corrupted")]["OC"] == 1.0 and groups[("primary", "statewise",
                                                                                   "corrupted")]["n"] == 4
    assert groups[("dev", "statewise", "corrupted")]["OC"] == 0.25
    assert {(r["set"], r["sequences"]) for r in metrics["sequences"]} == {("primary", 1), ("dev", 1)}
    assert all("set" in row for row in metrics["breakdowns"])
    assert {r["set"] for r in metrics["breakdowns"] if r["by"] == "category"} == {"primary", "dev"}
    assert {r["set"] for r in plot_data(metrics)} == {"primary", "dev"}
    # a set's interval does not depend on the other sets in the run
    alone = aggregate([e for e in episodes if e.set == "dev"], bootstrap=100, seed=0)
    assert [g["OC_ci"] for g in alone["groups"]] == [g["OC_ci"] for g in metrics["groups"] if g["set"] == "dev"]


def test_paired_tests_pair_by_set_case_and_condition():
    """Colliding case ids in two sets are different pairs; Holm corrects within (set, condition)."""
    episodes = []
    for i in range(6):
        episodes += [ep(f"c{i}", y=True, set="primary"), ep(f"c{i}", y=False, method="agent", set="primary")]
        episodes += [ep(f"c{i}", y=False, set="dev"), ep(f"c{i}", y=True, method="agent", set="dev")]
    rows = {(r["set"], r["method"]): r for r in paired_tests(episodes)}
    assert set(rows) == {("primary", "agent"), ("dev", "agent")}
    primary, dev = rows[("primary", "agent")], rows[("dev", "agent")]
    assert (primary["pairs"], primary["reference_only"], primary["method_only"]) == (6, 6, 0)
    assert (dev["pairs"], dev["reference_only"], dev["method_only"]) == (6, 0, 6)
    assert primary["delta_OC"] == -1.0 and dev["delta_OC"] == 1.0
    assert primary["p"] == pytest.approx(2 / 64) and primary["p_holm"] == primary["p"]  # one test per family


def test_transfer_groups_from_tags():
    def tagged(case, tags, y, method="statewise"):
        return ep(case, y=y, method=method, set="primary", tags=tags)

    episodes = [tagged("a", ["seen"], True), tagged("b", ["seen"], False),
                tagged("c", ["unseen", "new_repository"], True),
                tagged("d", ["unseen", "fully_unseen", "new_repository", "new_operation", "new_state_type",
                             "new_state_action"], False),
                tagged("e", ["transfer_unlisted"], True),  # not in transfer.json: in no group
                tagged("a", ["seen"], False, method="agent"),
                ep("a", y=True, set="dev")]  # another set without tags: no rows
    rows = {(r["group"], r["method"]): r for r in transfer(episodes, resamples=50)}
    assert [g for g, m in rows if m == "statewise"] == ["seen", "unseen", "fully_unseen", "new_repository",
                                                        "new_operation", "new_state_type", "new_state_action"]
    assert (rows[("seen", "statewise")]["cases"], rows[("seen", "statewise")]["OC"]) == (2, 0.5)
    assert (rows[("unseen", "statewise")]["cases"], rows[("unseen", "statewise")]["OC"]) == (2, 0.5)
    assert rows[("new_repository", "statewise")]["cases"] == 2 and rows[("fully_unseen", "statewise")]["OC"] == 0
    assert rows[("seen", "agent")]["n"] == 1 and rows[("seen", "statewise")]["label"] == "seen"
    assert {r["set"] for r in rows.values()} == {"primary"}
    # hand-tagged cases mark only the unseen ones: the untagged count as seen
    hand = [ep("x", y=True, tags=["unseen", "new_repo"]), ep("y", y=False), ep("z", y=True)]
    hand_rows = {r["group"]: r for r in transfer(hand, resamples=0)}
    assert list(hand_rows) == ["seen", "unseen", "new_repo"] and hand_rows["seen"]["cases"] == 2
    assert transfer([ep("x", y=True, tags=["variant:a"])]) == []
