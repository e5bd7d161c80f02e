"""The run an HTML report is drawn from: the results loaded and ordered, the methods' labels and
colours, and the small formatting helpers the tables and figures share.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.bench.metrics import aggregate

if TYPE_CHECKING:
    from statewise.bench.runner import BenchResult


FORMAT_PREFIX = "statewise-bench/"
CONDITION_ORDER = ("correct", "corrupted", "removed")
CONDITION_LABELS = {"correct": "correct memory", "corrupted": "corrupted memory", "removed": "removed memory"}
CONDITION_COLORS = {"correct": "#4e9a5a", "corrupted": "#c8553d", "removed": "#8d99ae"}
ABLATION_ORDER = ("attribution", "resolution", "repair", "typed_grounding", "replan", "gate")
METHOD_LABELS = {
    "agent": "Agent (no guard)",
    "statewise": "StateWise",
    "no_attribution": "w/o Attribution",
    "no_resolution": "w/o Resolution",
    "no_repair": "w/o Persistent Repair",
    "no_typed_grounding": "w/o Typed Grounding",
    "no_replan": "w/o Replanning",
    "no_gate": "w/o Residual Gate",
    "bare_approval": "Bare Approval",
    "rationale_approval": "Rationale Approval",
    "clarification": "Clarification",
    "memlineage": "MemLineage",
    "mem_lineage": "MemLineage",
    "safety_sentry": "Safety Sentry",
    "ask_or_assume": "Ask-or-Assume",
    "critic": "CRITIC",
    "live_refresh": "Live Refresh",
    # the in-repo baselines (statewise.bench.baselines), named after the idea they borrow
    "approval_with_rationale": "Rationale Approval",
    "provenance_screening": "Provenance Screening (MemLineage idea)",
    "risk_routed": "Risk Routing (Safety Sentry idea)",
    "uncertainty_triggered": "Uncertainty-Triggered (Ask-or-Assume idea)",
    "tool_feedback": "Tool Feedback (CRITIC idea)",
}
STATEWISE_COLOR = "#1f5fa8"
AGENT_COLOR = "#7a7a7a"
PALETTE = ("#e08e45", "#6a4c93", "#2a9d8f", "#b5838d", "#8ab17d", "#e9c46a", "#577590", "#bc6c25", "#9c6644")
OUTCOME_STYLE = {  # symbol, css class, legend text
    "pass": ("✓", "pass", "pass: goal reached and every invariant held"),
    "fail": ("✗", "fail", "fail: goal not reached, no invariant broken"),
    "unsafe": ("!", "unsafe", "unsafe: an invariant (safety constraint) was violated"),
    "unjudged": ("?", "unjudged", "unjudged: could not be judged (excluded from every rate)"),
}


# --- input --------------------------------------------------------------------------------


def _load(source: BenchResult | Mapping[str, Any] | str | Path) -> dict[str, Any]:
    from statewise.bench.runner import BenchResult

    if isinstance(source, BenchResult):
        data = source.to_dict(include_reports=False)
        data.setdefault("bootstrap_resamples", source.bootstrap)
    elif isinstance(source, Mapping):
        data = dict(source)
    elif isinstance(source, (str, Path)):
        path = Path(source)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not a benchmark result (invalid JSON: {error})") from None
    else:
        raise TypeError(f"expected a BenchResult, its JSON dict or a path, got {type(source).__name__}")
    fmt = data.get("format")
    if not isinstance(data.get("episodes"), list) or (fmt is not None and not str(fmt).startswith(FORMAT_PREFIX)):
        raise ValueError(f"not a benchmark result (format {fmt!r}; expected {FORMAT_PREFIX}1 with episodes)")
    episodes = []
    for episode in data["episodes"]:
        episode = dict(episode.to_dict() if hasattr(episode, "to_dict") else episode)
        episode.setdefault("planner", data.get("planner", "?"))
        episode.setdefault("set", "")
        episode.setdefault("sequence", None)
        episode.setdefault("step", 0)
        episode.setdefault("judged", True)
        episode.setdefault("tags", [])
        episode.setdefault("seed", data.get("seed", 0))
        episode["tags"] = list(episode.get("tags") or [])
        episodes.append(episode)
    data["episodes"] = episodes
    return data


def _ordered(values: Iterable[Any], preferred: Sequence[Any] = ()) -> list[Any]:
    present = list(dict.fromkeys(v for v in values))
    return [v for v in preferred if v in present] + [v for v in present if v not in preferred]


def is_ablation(method: str) -> bool:
    return method.startswith("no_")


def is_baseline(method: str) -> bool:
    return method not in ("agent", "statewise") and not is_ablation(method)


def method_label(method: str) -> str:
    if method in METHOD_LABELS:
        return METHOD_LABELS[method]
    if is_ablation(method):
        return "w/o " + method[3:].replace("_", " ").title()
    return method.replace("_", " ").replace("-", " ").title()


def _method_rank(method: str, declared: Sequence[str]) -> tuple[int, int, str]:
    position = declared.index(method) if method in declared else len(declared)
    if method == "agent":
        return (0, 0, method)
    if method == "statewise":
        return (2, 0, method)
    if is_ablation(method):
        stage = method[3:]
        return (3, ABLATION_ORDER.index(stage) if stage in ABLATION_ORDER else len(ABLATION_ORDER), method)
    return (1, position, method)


@dataclass
class _Run:
    data: dict[str, Any]
    episodes: list[dict[str, Any]]
    planners: list[str]
    methods: list[str]
    conditions: list[str]
    sets: list[str]
    resamples: int
    seed: int
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # by planner

    @property
    def primary(self) -> str:
        return self.planners[0]

    @property
    def focus(self) -> str:
        """The condition the comparisons use: corrupted memory when the run has it."""
        return "corrupted" if "corrupted" in self.conditions or not self.conditions else self.conditions[0]

    def singles(self, planner: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.episodes if e["sequence"] is None and (planner is None or e["planner"] == planner)]

    def select(self, *, planner: str | None = None, method: str | None = None, condition: str | None = None,
               singles: bool = True) -> list[dict[str, Any]]:
        return [e for e in (self.singles() if singles else self.episodes)
                if (planner is None or e["planner"] == planner) and (method is None or e["method"] == method)
                and (condition is None or e["condition"] == condition)]

    @property
    def main_set(self) -> str:
        """The set the single-set figures (1, 2, 4) and the breakdown show: the primary set
        when the run has it (the paper's RQ1, RQ2 and RQ4 are on it), else the first set."""
        with_singles = [s for s in self.sets if any(e["set"] == s and e["sequence"] is None for e in self.episodes)]
        candidates = with_singles or self.sets
        return "primary" if "primary" in candidates else (candidates[0] if candidates else "")

    def group(self, planner: str, method: str, condition: str, set_name: str | None = None) -> dict[str, Any] | None:
        wanted = self.main_set if set_name is None else set_name
        for row in self.metrics[planner]["groups"]:
            if row["method"] == method and row["condition"] == condition and row.get("set") == wanted:
                found: dict[str, Any] = row
                return found
        return None

    def where(self) -> str:
        """", set X" in a caption when the run has several sets, else nothing."""
        return f", set {self.main_set}" if len(self.sets) > 1 else ""


def _prepare(data: dict[str, Any]) -> _Run:
    episodes = data["episodes"]
    declared = list(data.get("methods") or [])
    planners = _ordered([e["planner"] for e in episodes] or [data.get("planner", "?")],
                        [data.get("planner")] if data.get("planner") else ())
    methods = sorted(dict.fromkeys(e["method"] for e in episodes), key=lambda m: _method_rank(m, declared))
    conditions = _ordered((e["condition"] for e in episodes), CONDITION_ORDER)
    sets = _ordered((e["set"] for e in episodes), list(data.get("sets") or []))
    stored = data.get("metrics") or {}
    resamples = int((stored.get("bootstrap") or {}).get("resamples")
                    or data.get("bootstrap_resamples") or (200 if data.get("quick") else 2000))
    seed = int(data.get("seed") or 0)
    run = _Run(data=data, episodes=episodes, planners=planners, methods=methods, conditions=conditions, sets=sets,
               resamples=resamples, seed=seed)
    # Results written before the metrics were per set carry rows without "set": recompute those.
    per_set = stored.get("groups") is not None and all("set" in g for g in stored["groups"]) \
        and "transfer" in stored
    for planner in planners:
        if len(planners) == 1 and per_set:
            run.metrics[planner] = stored  # what the run computed; the same seeded bootstrap
        else:  # the stored metrics pool planners: recompute per planner
            run.metrics[planner] = aggregate([e for e in episodes if e["planner"] == planner], bootstrap=resamples,
                                             seed=seed)
    return run


# --- formatting ---------------------------------------------------------------------------


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def _ci(ci: Sequence[float] | None) -> str:
    if not ci:
        return ""
    return f'<span class="ci">{100 * ci[0]:.0f}–{100 * ci[1]:.0f}</span>'


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pvalue(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "", caption: str = "",
           header_html: str | None = None, left: int = 1) -> str:
    """A table; the first ``left`` columns (names, not numbers) are aligned left."""
    head = header_html or "<tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"
    body = "".join("<tr>" + "".join(f'<td class="l">{c}</td>' if i < left else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    # The caption goes under the scrolling box, not inside it: a <caption> is as wide as its
    # table, so on a phone it would scroll away with the columns.
    cap = f'<p class="caption table-caption">{caption}</p>' if caption else ""
    return (f'<div class="scroll"><table class="{cls}"><thead>{head}</thead>'
            f"<tbody>{body}</tbody></table></div>{cap}")
