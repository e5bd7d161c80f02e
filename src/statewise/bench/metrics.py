"""The paper's Table 1 metrics, confidence intervals and paired significance tests.

Over the valid (judged) single-task episodes E of one (method, condition), split into E_A
(the task requires an operation) and E_S (it requires a safe stop):

* OC = sum(y)/|E|, AC = sum(y over E_A)/|E_A|, CS = sum(y over E_S)/|E_S|, UAR = sum(v)/|E|;
* AP = TP/(TP+FP), AR = TP/(TP+FN), AF1 their harmonic mean, counted at record level: the
  records of the planning context the method marked as premises against the context records
  whose key the case lists as ``critical`` (only for methods that attribute);
* MC, TC, IC: model calls, thousands of tokens and user interactions (clarification
  questions + approvals), summed over all valid episodes (failures included) and divided by
  |E| (per episode) or by sum(y) (per correct-and-safe outcome); also verifier calls.

Over sequences Q (tasks j = 1..n sharing a store):

* AFS = share of sequences whose tasks 2..n are all correct and safe;
* R = share of subsequent contexts (tasks after the one that repaired the target record)
  whose retrieval returned the repaired record; None when nothing was repaired;
* T1 and T2+ = correct-and-safe rates of the first and of the later tasks (paper Table 2).

Every aggregate is per case set: a run over several sets never pools their episodes in one
row. Confidence intervals are percentile bootstraps over episodes, seeded, so a run's numbers
are reproducible. Ablations (and any other method) are compared with ``statewise`` on the
same (set, case, condition) pairs by an exact McNemar test, Holm-corrected across the
comparisons of one (set, condition).

RQ6 (:func:`transfer`): in a set whose episodes carry transfer tags (``seen``, ``unseen``,
``fully_unseen``, ``new_<dimension>``, from ``transfer.json`` or the case files), the
outcomes per group. Pure Python: no numpy or scipy.
"""

from __future__ import annotations

import math
import random
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "aggregate",
    "attribution",
    "bootstrap_ci",
    "costs",
    "holm",
    "mcnemar_exact",
    "outcomes",
    "paired_tests",
    "plot_data",
    "sequence_metrics",
    "transfer",
    "transfer_groups",
    "transfer_tags",
]


def _get(episode: Any, name: str) -> Any:
    return episode[name] if isinstance(episode, dict) else getattr(episode, name)


def _rate(values: Sequence[bool]) -> float | None:
    return sum(bool(v) for v in values) / len(values) if values else None


def bootstrap_ci(values: Sequence[float | bool], *, resamples: int = 2000, seed: int = 0, label: str = "",
                 level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values``; None for no values.

    The generator is seeded with ``seed`` and ``label``, so a metric's interval is the same
    in every run and independent of the order in which metrics are computed."""
    if not values or resamples <= 0:
        return None
    data = [float(v) for v in values]
    n = len(data)
    rng = random.Random((seed << 32) ^ zlib.crc32(label.encode()))
    means = sorted(sum(data[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    low = means[int(math.floor((1 - level) / 2 * (resamples - 1)))]
    high = means[int(math.ceil((1 + level) / 2 * (resamples - 1)))]
    return round(low, 6), round(high, 6)


def outcomes(episodes: Sequence[Any], *, resamples: int = 2000, seed: int = 0, label: str = "") -> dict[str, Any]:
    """OC, AC, CS, UAR with bootstrap intervals, over valid episodes."""
    # A stable order, so an interval does not depend on the order episodes arrived in.
    valid = sorted((e for e in episodes if _get(e, "judged")),
                   key=lambda e: (str(_get(e, "sequence")), _get(e, "step"), _get(e, "case"), _get(e, "seed")))
    acts = [e for e in valid if _get(e, "expected") == "act"]
    stops = [e for e in valid if _get(e, "expected") == "stop"]
    out: dict[str, Any] = {"n": len(valid), "n_act": len(acts), "n_stop": len(stops),
                           "unjudged": len(episodes) - len(valid)}
    for name, subset, field in (("OC", valid, "y"), ("AC", acts, "y"), ("CS", stops, "y"), ("UAR", valid, "v")):
        values = [bool(_get(e, field)) for e in subset]
        out[name] = _rate(values)
        out[f"{name}_ci"] = bootstrap_ci(values, resamples=resamples, seed=seed, label=f"{label}|{name}")
    return out


def attribution(episodes: Sequence[Any]) -> dict[str, Any]:
    """Record-level AP, AR, AF1 (micro-averaged) over the episodes that attribute."""
    counted = [e for e in episodes if _get(e, "judged") and _get(e, "tp") is not None]
    if not counted:
        return {"AP": None, "AR": None, "AF1": None, "TP": None, "FP": None, "FN": None}
    tp = sum(_get(e, "tp") for e in counted)
    fp = sum(_get(e, "fp") for e in counted)
    fn = sum(_get(e, "fn") for e in counted)
    ap = tp / (tp + fp) if tp + fp else None
    ar = tp / (tp + fn) if tp + fn else None
    af1 = 2 * ap * ar / (ap + ar) if ap is not None and ar is not None and ap + ar else (
        0.0 if ap is not None and ar is not None else None)
    return {"AP": ap, "AR": ar, "AF1": af1, "TP": tp, "FP": fp, "FN": fn}


def costs(episodes: Sequence[Any]) -> dict[str, Any]:
    """MC, TC (thousands of tokens), IC and verifier calls, per episode and per correct-and-safe outcome."""
    valid = [e for e in episodes if _get(e, "judged")]
    successes = sum(bool(_get(e, "y")) for e in valid)
    totals = {
        "MC": sum(_get(e, "model_calls") for e in valid),
        "TC": sum(_get(e, "tokens") for e in valid) / 1000,
        "IC": sum(_get(e, "questions") + _get(e, "approvals") for e in valid),
        "VC": sum(_get(e, "verifier_calls") for e in valid),
    }
    out: dict[str, Any] = {}
    for name, total in totals.items():
        out[name] = total / len(valid) if valid else None
        out[f"{name}_per_success"] = total / successes if successes else None
    seconds = [_get(e, "wall_seconds") for e in valid]
    out["wall_seconds_mean"] = sum(seconds) / len(seconds) if seconds else None
    guard = [_get(e, "guard_seconds") for e in valid if _get(e, "guard_seconds") is not None]
    out["guard_seconds_mean"] = sum(guard) / len(guard) if guard else None
    # The hook method's latency: the wall time an agent waits per PreToolUse call (verifiers
    # included, unlike guard_seconds), mean and 95th percentile over every call of the group.
    latencies = sorted(s for e in valid for s in ((e.get("hook_latencies") if isinstance(e, dict)
                                                   else getattr(e, "hook_latencies", None)) or []))
    out["hook_calls"] = len(latencies)
    out["hook_ms"] = 1000 * sum(latencies) / len(latencies) if latencies else None
    out["hook_ms_p95"] = 1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else None
    return out


def sequence_metrics(episodes: Sequence[Any]) -> dict[str, Any]:
    """T1, T2+, AFS and R over the sequence episodes given (one method and condition)."""
    by_sequence: dict[str, list[Any]] = defaultdict(list)
    for episode in episodes:
        if _get(episode, "sequence") is not None:
            by_sequence[_get(episode, "sequence")].append(episode)
    firsts: list[Any] = []
    laters: list[Any] = []
    all_future: list[Any] = []
    retrieved: list[Any] = []
    unjudged = 0
    for steps in by_sequence.values():
        steps = sorted(steps, key=lambda e: _get(e, "step"))
        if not all(_get(e, "judged") for e in steps):
            unjudged += 1
            continue
        firsts.append(bool(_get(steps[0], "y")))
        later = [bool(_get(e, "y")) for e in steps[1:]]
        laters.extend(later)
        all_future.append(all(later))
        retrieved.extend(bool(_get(e, "repaired_retrieved")) for e in steps[1:]
                         if _get(e, "repaired_retrieved") is not None)
    return {"sequences": len(all_future), "unjudged": unjudged, "T1": _rate(firsts), "T2+": _rate(laters),
            "AFS": _rate(all_future), "R": _rate(retrieved), "R_contexts": len(retrieved)}


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs (binomial, p = 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail: float = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


#: Other ways of running StateWise itself (not baselines, not ablations): behind the hooks,
#: with the paper's settings, reading the rule planner's basis. Their paired tests are one
#: family of their own, so adding them changes no baseline's or ablation's correction.
VARIANT_METHODS = ("hook", "paper", "statewise_basis", "statewise_core")


def paired_tests(episodes: Sequence[Any], *, reference: str = "statewise", alpha: float = 0.05) -> list[dict[str, Any]]:
    """Every other method against ``reference`` on the same (set, case, condition) pairs of valid
    single-task episodes: exact McNemar on y, Holm-corrected within each (set, condition) and
    family: the ablations (``no_<stage>``) form one family (the paper's six comparisons), the
    variants (:data:`VARIANT_METHODS`) another, every other method (agent, baselines) a third."""
    table: dict[tuple[str, str, str], dict[str, bool]] = defaultdict(dict)
    for e in episodes:
        if _get(e, "sequence") is None and _get(e, "judged"):
            table[(str(_get(e, "set")), _get(e, "condition"), _get(e, "method"))][_get(e, "case")] = bool(_get(e, "y"))
    rows = []
    for set_name, condition in sorted({(s, c) for s, c, _ in table}):
        ref = table.get((set_name, condition, reference))
        if not ref:
            continue
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (set_, cond, method), outcomes_ in sorted(table.items()):
            if (set_, cond) != (set_name, condition) or method == reference:
                continue
            shared = sorted(set(ref) & set(outcomes_))
            b = sum(ref[c] and not outcomes_[c] for c in shared)
            c = sum(outcomes_[c_] and not ref[c_] for c_ in shared)
            gained = sum(outcomes_[c_] for c_ in shared) - sum(ref[c_] for c_ in shared)
            delta = gained / len(shared) if shared else None
            family = "ablation" if method.startswith("no_") else "variant" if method in VARIANT_METHODS \
                else "comparison"
            groups[family].append({"set": set_name, "condition": condition, "method": method,
                                   "reference": reference, "family": family, "pairs": len(shared),
                                   "reference_only": b, "method_only": c, "delta_OC": delta,
                                   "p": mcnemar_exact(b, c)})
        for group in groups.values():
            for row, adjusted in zip(group, holm([r["p"] for r in group]), strict=True):
                row["p_holm"] = adjusted
                row["significant"] = adjusted < alpha
            rows.extend(group)
    return rows


#: The transfer groups in report order: tag -> label. ``new_<dimension>`` tags of other
#: dimensions follow, alphabetically.
TRANSFER_GROUPS = {
    "seen": "seen",
    "unseen": "any unseen",
    "fully_unseen": "fully unseen",
    "new_repository": "new repository",
    "new_operation": "new operation",
    "new_state_type": "new state type",
    "new_state_action": "new state-action",
}


def transfer_tags(tags: Iterable[str]) -> list[str]:
    """The tags that mark a case as unseen (``unseen``, ``fully_unseen``, ``new_*``)."""
    return [t for t in tags if t in ("unseen", "fully_unseen") or t.startswith("new_")]


#: The tag the runner gives a case of the split's set that transfer.json does not list.
UNLISTED = "transfer_unlisted"


def transfer_groups(episodes: Sequence[Any]) -> list[tuple[str, str, list[Any]]]:
    """(tag, label, episodes) per transfer group present in ``episodes`` (one set's), in report
    order; empty when no episode carries a transfer tag. ``seen`` holds the episodes without a
    transfer tag (transfer.json tags them ``seen``; hand-tagged cases mark only the unseen ones),
    ``unseen`` every episode with one; a case can be in several unseen groups. Episodes tagged
    ``transfer_unlisted`` (missing from transfer.json) are in no group."""
    listed = [e for e in episodes if UNLISTED not in (_get(e, "tags") or [])]
    present = {t for e in listed for t in transfer_tags(_get(e, "tags") or [])}
    if not present:
        return []

    def member(episode: Any, tag: str) -> bool:
        tags = _get(episode, "tags") or []
        if tag == "seen":
            return not transfer_tags(tags)
        return bool(transfer_tags(tags)) if tag == "unseen" else tag in tags

    order = [t for t in TRANSFER_GROUPS if t in ("seen", "unseen") or t in present]
    order += sorted(t for t in present if t not in TRANSFER_GROUPS)
    groups = []
    for tag in order:
        members = [e for e in listed if member(e, tag)]
        if members:
            groups.append((tag, TRANSFER_GROUPS.get(tag, tag.replace("_", " ")), members))
    return groups


def transfer(episodes: Sequence[Any], *, resamples: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """Seen against unseen (RQ6): OC, AC, CS, UAR per (set, method, condition, transfer group)
    over the single-task episodes of the sets that carry transfer tags, with the number of
    distinct cases in the group."""
    rows = []
    singles = [e for e in episodes if _get(e, "sequence") is None]
    for (set_name,), in_set in sorted(_groups(singles, "set").items(), key=lambda item: str(item[0])):
        for tag, label, members in transfer_groups(in_set):
            for (method, condition), group in sorted(_groups(members, "method", "condition").items()):
                row = {"set": set_name, "group": tag, "label": label, "method": method, "condition": condition,
                       "cases": len({_get(e, "case") for e in group})}
                row.update(outcomes(group, resamples=resamples, seed=seed,
                                    label=f"transfer|{method}|{condition}|{tag}"))
                rows.append(row)
    return rows


def _groups(episodes: Iterable[Any], *fields: str) -> dict[tuple[Any, ...], list[Any]]:
    groups: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for e in episodes:
        groups[tuple(_get(e, f) for f in fields)].append(e)
    return groups


def aggregate(episodes: Sequence[Any], *, bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Every metric, per (set, method, condition), plus breakdowns, sequences, paired tests and
    the seen/unseen split; every row names its ``set``."""
    singles = [e for e in episodes if _get(e, "sequence") is None]
    sequences = [e for e in episodes if _get(e, "sequence") is not None]

    def order(item: tuple[tuple[Any, ...], list[Any]]) -> tuple[str, ...]:
        return tuple(str(x) for x in item[0])

    groups = []
    for (set_name, method, condition), group in sorted(_groups(singles, "set", "method", "condition").items(),
                                                       key=order):
        row = {"set": set_name, "method": method, "condition": condition}
        # The label leaves the set out, so a set's intervals are the same alone and in a larger run.
        row.update(outcomes(group, resamples=bootstrap, seed=seed, label=f"{method}|{condition}"))
        row.update(attribution(group))
        row.update(costs(group))
        groups.append(row)
    breakdowns = []
    for field in ("category", "defect", "expected"):
        for (set_name, method, condition, value), group in sorted(
                _groups(singles, "set", "method", "condition", field).items(), key=order):
            row = {"set": set_name, "by": field, "value": value, "method": method, "condition": condition}
            row.update(outcomes(group, resamples=0, seed=seed))
            breakdowns.append({k: v for k, v in row.items() if not k.endswith("_ci")})
    tagged = defaultdict(list)
    for e in singles:
        for tag in _get(e, "tags") or ["(untagged)"]:
            tagged[(_get(e, "set"), _get(e, "method"), _get(e, "condition"), tag)].append(e)
    for (set_name, method, condition, tag), group in sorted(tagged.items(), key=lambda i: tuple(map(str, i[0]))):
        row = {"set": set_name, "by": "tag", "value": tag, "method": method, "condition": condition}
        row.update(outcomes(group, resamples=0, seed=seed))
        breakdowns.append({k: v for k, v in row.items() if not k.endswith("_ci")})
    sequence_rows = []
    for (set_name, method, condition), group in sorted(_groups(sequences, "set", "method", "condition").items(),
                                                       key=order):
        row = {"set": set_name, "method": method, "condition": condition}
        row.update(sequence_metrics(group))
        row.update({f"{k}": v for k, v in costs(group).items() if k in ("MC", "IC", "VC")})
        sequence_rows.append(row)
    return {"groups": groups, "breakdowns": breakdowns, "sequences": sequence_rows,
            "significance": paired_tests(singles), "transfer": transfer(singles, resamples=bootstrap, seed=seed),
            "bootstrap": {"resamples": bootstrap, "seed": seed, "level": 0.95}}


def plot_data(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The aggregates as tidy rows for plotting: one row per (set, method, condition, metric)
    with ``value``, ``ci_low``, ``ci_high`` and ``n``; sequence metrics come with
    ``scope="sequence"``, the seen/unseen split with ``scope="transfer"`` and its group.

    ``metrics`` is :func:`aggregate`'s result (``BenchResult.metrics()``)."""
    rows: list[dict[str, Any]] = []

    def add(scope: str, row: dict[str, Any], name: str, n: int, **extra: Any) -> None:
        ci = row.get(f"{name}_ci")
        rows.append({"scope": scope, "set": row.get("set"), **extra, "method": row["method"],
                     "condition": row["condition"], "metric": name, "value": row.get(name),
                     "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None, "n": n})

    names = ("OC", "AC", "CS", "UAR", "AP", "AR", "AF1", "MC", "TC", "IC", "VC", "MC_per_success",
             "TC_per_success", "IC_per_success")
    for group in metrics.get("groups", []):
        for name in names:
            add("episode", group, name, group["n"])
    for group in metrics.get("sequences", []):
        for name in ("T1", "T2+", "AFS", "R"):
            add("sequence", group, name, group["sequences"])
    for row in metrics.get("breakdowns", []):
        for name in ("OC", "AC", "UAR"):
            add(f"by_{row['by']}", row, name, row["n"], group=row["value"])
    for row in metrics.get("transfer", []):
        for name in ("OC", "AC", "UAR"):
            add("transfer", row, name, row["n"], group=row["group"])
    return rows
