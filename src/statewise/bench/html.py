"""An offline HTML report of a benchmark run: the metric tables, the paper's figures, every case.

:func:`write_html_report` takes a :class:`~statewise.bench.runner.BenchResult`, the dictionary
of its JSON (format ``statewise-bench/1``) or the path of that JSON file, and writes one
self-contained HTML file: the figures are PNGs drawn with matplotlib's Agg canvas and
embedded as ``data:`` URIs, the styles are inline, and there is no script and no network
resource, so the page opens offline and can be mailed or archived as it is.

The page holds

* a header: planner(s), when the run started, case sets, counts, the command when the JSON
  records one;
* the paper's Table 1 per (method, condition) with 95% bootstrap intervals, the paired
  McNemar tests and a breakdown by category and defect;
* the figures of section 5, each drawn only when the run has the data it needs (otherwise a
  one-line note says what is missing):

  1. OC, AC and UAR per method under each memory condition (Figure 5),
  2. the baselines against StateWise under corrupted memory (Figure 6),
  3. recovery across planners and case sets (Figure 7),
  4. the ablations with Holm-corrected McNemar p-values (Figure 8),
  5. the four-task sequences: T1, T2-Tn, AFS and R (Table 2),
  6. seen against unseen configurations, from the episodes' tags (Figure 9);

* a per-case outcome matrix (pass, fail, unsafe, unjudged for every case under every
  method and condition) and the list of every episode that did not pass;
* a plain statement of what the comparison can and cannot show.

It reads on a phone too: each figure is also drawn as one column of panels with larger text,
which the browser shows below 760 px (``<picture>``); tables scroll inside their box, never
the page; a matrix cell opens its details on a tap (``<details>``) as well as on hover.

The output depends only on the input: there is no generation timestamp, the bootstrap is
seeded, and the PNGs carry no metadata, so the same result renders to the same bytes.
"""

from __future__ import annotations

import base64
import html
import io
import json
import shlex
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from statewise.bench.metrics import aggregate, holm, outcomes, transfer_groups
from statewise.errors import MissingExtraError

if TYPE_CHECKING:
    from statewise.bench.runner import BenchResult

__all__ = ["render_html", "write_html_report"]

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


# --- figures ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Image:
    """A drawn figure: the PNG (base64) and the sizes of its text in the image's own pixels,
    so the page can say how large the text shows at a given width."""

    png: str
    width_px: int
    min_font_px: float  # the smallest text: tick labels, bar values, notes
    legend_font_px: float | None  # None without a legend


@dataclass
class _Figure:
    number: int
    title: str
    image: _Image | None = None  # drawn for a wide screen
    phone: _Image | None = None  # the same data laid out for a phone's column
    caption: str = ""
    note: str = ""  # why it was skipped, or a remark under a drawn figure
    extra_html: str = ""  # a table that belongs to the figure (Table 2)


_RC = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "legend.fontsize": 8, "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
    "grid.alpha": 0.3, "axes.axisbelow": True, "font.family": "DejaVu Sans", "svg.hashsalt": "statewise",
}
#: Wide figures: at most this wide (inches) so that, at _WIDE_DPI, they are shown at their own
#: size in the 1400 px page instead of being shrunk (which would shrink their text).
_WIDE_MAX = 12.0
_WIDE_DPI = 110
#: Phone figures: one column of panels drawn for the ~366 CSS px a 390 px screen leaves, with
#: text large enough to read there (about 1.4 CSS px per point), at a DPI for sharp screens.
_PHONE_WIDTH = 3.6
_PHONE_DPI = 200
_PHONE_RC = {**_RC, "font.size": 9.5, "axes.titlesize": 10.5, "axes.labelsize": 9, "xtick.labelsize": 8.5,
             "ytick.labelsize": 8.5, "legend.fontsize": 9}
#: The bar value labels and n/a marks (points); the phone's are larger.
_SMALL = {False: 7.0, True: 8.0}


def _draw(width: float, height: float, paint: Callable[[Any, bool], None], *, phone: bool = False) -> _Image:
    """Paint on a fresh Agg figure (for a phone, ``width`` is ignored: one narrow column) and
    return the PNG as base64 with its text sizes; no pyplot, no global backend."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    dpi = _PHONE_DPI if phone else _WIDE_DPI
    with matplotlib.rc_context(cast(Any, _PHONE_RC if phone else _RC)):
        figure = Figure(figsize=(_PHONE_WIDTH if phone else min(width, _WIDE_MAX), height), dpi=100,
                        layout="constrained")
        FigureCanvasAgg(figure)
        paint(figure, phone)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    texts = [float(t.get_fontsize()) for t in figure.findobj(Text)
             if isinstance(t, Text) and t.get_visible() and t.get_text().strip()]
    legends = [float(t.get_fontsize()) for legend in figure.legends for t in legend.get_texts()]
    return _Image(
        png=base64.b64encode(buffer.getvalue()).decode("ascii"),
        width_px=round(figure.get_figwidth() * dpi),
        min_font_px=round(min(texts) * dpi / 72, 2) if texts else 0.0,
        legend_font_px=round(min(legends) * dpi / 72, 2) if legends else None,
    )


def _both(figure: _Figure, width: float, height: float, phone_height: float,
          paint: Callable[[Any, bool], None]) -> None:
    """Draw ``figure`` for a wide screen and for a phone."""
    figure.image = _draw(width, height, paint)
    figure.phone = _draw(_PHONE_WIDTH, phone_height, paint, phone=True)


def _phone_height(panels: int, bars: int, *, per_bar: float = 0.2, legend: bool = True) -> float:
    """A phone figure's height (inches): panels stacked, each as tall as its horizontal bars."""
    return panels * (per_bar * bars + 0.75) + (0.45 if legend else 0.1)


Bar = tuple[float | None, Sequence[float] | None]  # value, (low, high)
Series = tuple[str, str | Sequence[str], Sequence[Bar]]  # name, colour (or one per category), bars


def _bars(ax: Any, categories: Sequence[str], series: Sequence[Series], *, ylabel: str,
          horizontal: bool = False, labels: bool = True, mark_missing: bool = True, phone: bool = False) -> None:
    """Grouped bars in percent with CI whiskers; a missing value (None) is marked n/a.

    A series' colour may be one colour per category (one series of differently coloured
    bars). Legends are the caller's business (:func:`_legend`)."""
    count = max(1, len(series))
    width = 0.8 / count
    for index, (_, color, values) in enumerate(series):
        offset = (index - (count - 1) / 2) * width
        for position, (value, ci) in enumerate(values):
            x = position + offset
            if value is None:
                if not mark_missing:
                    continue
                if horizontal:
                    ax.text(1, x, "n/a", va="center", ha="left", fontsize=_SMALL[phone], color="#777")
                else:
                    ax.text(x, 1, "n/a", ha="center", va="bottom", fontsize=_SMALL[phone], color="#777",
                            rotation=90)
                continue
            height = 100 * value
            err = None
            if ci:
                err = [[max(0.0, height - 100 * ci[0])], [max(0.0, 100 * ci[1] - height)]]
            shade = color if isinstance(color, str) else color[position]
            top = max(100 * ci[1], height) if ci else height
            if horizontal:
                ax.barh(x, height, height=width * 0.92, color=shade, xerr=err, ecolor="#333", capsize=2,
                        error_kw={"elinewidth": 0.8})
                if labels:
                    ax.text(top + 1.5, x, f"{height:.0f}", va="center", fontsize=_SMALL[phone])
            else:
                ax.bar(x, height, width=width * 0.92, color=shade, yerr=err, ecolor="#333", capsize=2,
                       error_kw={"elinewidth": 0.8})
                if labels:
                    ax.text(x, top + 1.5, f"{height:.0f}", ha="center", va="bottom", fontsize=_SMALL[phone])
    positions = list(range(len(categories)))
    if horizontal:
        ax.set_yticks(positions, categories)
        ax.set_ylim(len(categories) - 0.5, -0.5)  # first category on top
        ax.set_xlim(0, 112)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_xlabel(ylabel)
        ax.grid(axis="y", visible=False)
    else:
        ax.set_xticks(positions, categories)
        ax.set_xlim(-0.6, len(categories) - 0.4)
        ax.set_ylim(0, 112)
        ax.set_yticks([0, 25, 50, 75, 100])
        ax.set_ylabel(ylabel)
        ax.grid(axis="x", visible=False)


def _legend(fig: Any, entries: Sequence[tuple[str, str]], phone: bool = False) -> None:
    """One legend above the panels, outside the axes, so it never covers a bar."""
    from matplotlib.patches import Patch

    if len(entries) > 1:
        fig.legend(handles=[Patch(color=color, label=name) for name, color in entries], loc="outside upper center",
                   ncols=min(len(entries), 2 if phone else 5), frameon=False)


def _value(row: Mapping[str, Any] | None, metric: str) -> Bar:
    if row is None:
        return (None, None)
    ci = row.get(f"{metric}_ci")
    return (row.get(metric), tuple(ci) if ci else None)


def _wrap(label: str, width: int = 14) -> str:
    words, lines, line = label.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "\n".join(lines)


def _figure_conditions(run: _Run) -> _Figure:
    figure = _Figure(1, "OC, AC and UAR per method under each memory condition (paper Figure 5)")
    planner = run.primary
    shown = [m for m in run.methods if not is_ablation(m)] or list(run.methods)
    groups = {(m, c): run.group(planner, m, c) for m in shown for c in run.conditions}
    shown = [m for m in shown if any(groups[(m, c)] for c in run.conditions)]
    if not shown:
        figure.note = "Skipped: the run has no judged single-task episode."
        return figure
    categories = [_wrap(method_label(m)) for m in shown]
    colors = {c: CONDITION_COLORS.get(c, PALETTE[i % len(PALETTE)]) for i, c in enumerate(run.conditions)}
    stacked = len(shown) * len(run.conditions) > 12

    def paint(fig: Any, phone: bool) -> None:
        # A phone gets the panels one under another, the methods as rows of horizontal bars.
        axes = fig.subplots(3, 1) if phone else fig.subplots(3, 1, sharex=True) if stacked else fig.subplots(1, 3)
        for ax, metric in zip(axes, ("OC", "AC", "UAR"), strict=True):
            data = [(c, colors[c], [_value(groups[(m, c)], metric) for m in shown]) for c in run.conditions]
            _bars(ax, categories, data, ylabel=f"{metric} (%)" + (" ↓" if metric == "UAR" else ""),
                  labels=len(shown) * len(run.conditions) <= 40, horizontal=phone, phone=phone)
            ax.set_title(metric, loc="left", fontweight="bold")
        _legend(fig, [(CONDITION_LABELS.get(c, c), colors[c]) for c in run.conditions], phone)

    bars = len(shown) * len(run.conditions)
    width = 0.55 * bars + 1.5 if stacked else 3 * (0.5 * bars + 1.2)
    _both(figure, max(width, 7.5), 8.0 if stacked else 3.4, _phone_height(3, bars), paint)
    sizes = {c: max((g["n"] for (_, cc), g in groups.items() if cc == c and g), default=0) for c in run.conditions}
    ns = ", ".join(f"{CONDITION_LABELS.get(c, c)} n={sizes[c]}" for c in run.conditions)
    figure.caption = (f"Planner {planner}{run.where()}. Bars are rates over judged single-task episodes; "
                      "whiskers are 95% bootstrap intervals. Correct vs corrupted isolates the effect of the one "
                      f"target record; corrupted vs removed tests whether deleting it is enough. ({ns}.)")
    if any(is_ablation(m) for m in run.methods) and len(shown) < len(run.methods):
        figure.note = "The ablations are left out here; Figure 4 compares them."
    return figure


def _figure_baselines(run: _Run) -> _Figure:
    figure = _Figure(2, "Baselines against StateWise under corrupted memory (paper Figure 6)")
    planner = run.primary
    baselines = [m for m in run.methods if is_baseline(m)]
    if "corrupted" not in run.conditions:
        figure.note = "Skipped: the run has no corrupted-memory episodes."
        return figure
    if not baselines:
        figure.note = ("Skipped: no baseline method ran (only " + ", ".join(run.methods) + "). Baselines are "
                       "methods registered with register_method() and passed to --methods; Figure 1 already "
                       "compares the agent with StateWise.")
        return figure
    rows = {m: row for m in run.methods if not is_ablation(m) and (row := run.group(planner, m, "corrupted"))}
    shown = list(rows)
    colors = [STATEWISE_COLOR if m == "statewise" else AGENT_COLOR if m == "agent" else PALETTE[i % len(PALETTE)]
              for i, m in enumerate(shown)]
    labels = [method_label(m) for m in shown]

    def paint(fig: Any, phone: bool) -> None:
        axes = fig.subplots(3, 1) if phone else fig.subplots(1, 3, sharey=True)
        for ax, metric in zip(axes, ("OC", "AC", "UAR"), strict=True):
            _bars(ax, [_wrap(label, 18) for label in labels] if phone else labels,
                  [(metric, colors, [_value(rows[m], metric) for m in shown])],
                  ylabel=f"{metric} (%)" + (" ↓" if metric == "UAR" else ""), horizontal=True, phone=phone)
            ax.set_title(metric, loc="left", fontweight="bold")

    _both(figure, 10, 0.45 * len(shown) + 1.4, _phone_height(3, len(shown), per_bar=0.3, legend=False), paint)
    figure.caption = (f"Planner {planner}{run.where()}, corrupted target record, the same cases for every method "
                      f"(n={rows[shown[0]]['n']} per method). Whiskers: 95% bootstrap intervals.")
    return figure


def _subgroup_rows(run: _Run, episodes: list[dict[str, Any]], label: str) -> dict[str, Any]:
    return outcomes(episodes, resamples=run.resamples, seed=run.seed, label=label)


def _figure_settings(run: _Run) -> _Figure:
    figure = _Figure(3, "Recovery across planners and case sets (paper Figure 7)")
    # Sets of sequences only have no single-task bar to draw.
    single_sets = [s for s in run.sets if any(e["set"] == s for e in run.singles())]
    dimensions = [(name, values) for name, values in (("planner", run.planners), ("set", single_sets))
                  if len(values) > 1]
    if not dimensions:
        figure.note = (f"Skipped: one planner ({run.primary}) and one case set "
                       f"({', '.join(run.sets) or '–'}); the comparison needs several planners or sets in one "
                       "result (run the sets together, or merge the episodes of runs with different planners). "
                       "The breakdown by category and defect is in the tables above.")
        return figure
    condition = run.focus
    methods = [m for m in ("agent", "statewise") if m in run.methods] or run.methods[:2]
    panels = []
    for dimension, values in dimensions:
        for metric in ("OC", "AC"):
            series = []
            for method in methods:
                bars = []
                for value in values:
                    pool = run.singles(run.primary if dimension == "set" else None)
                    chosen = [e for e in pool if e[dimension] == value and e["method"] == method
                              and e["condition"] == condition]
                    row = _subgroup_rows(run, chosen, f"fig3|{dimension}|{value}|{method}") if chosen else None
                    bars.append(_value(row, metric) if row and row["n"] else (None, None))
                color = STATEWISE_COLOR if method == "statewise" else AGENT_COLOR if method == "agent" else PALETTE[0]
                series.append((method_label(method), color, bars))
            # set names are snake_case: break them at the underscores so neighbours do not overlap
            panels.append((dimension, metric, [_wrap(str(v).replace("_", " ") if dimension == "set" else str(v),
                                                     12 if dimension == "set" else 16) for v in values], series))

    def paint(fig: Any, phone: bool) -> None:
        axes = fig.subplots(len(panels), 1, squeeze=False) if phone else fig.subplots(len(dimensions), 2,
                                                                                     squeeze=False)
        for ax, (dimension, metric, categories, series) in zip(axes.flat, panels, strict=True):
            _bars(ax, categories, series, ylabel=f"{metric} (%)", horizontal=phone, phone=phone)
            ax.set_title(f"{metric} by {dimension}", loc="left", fontweight="bold")
        _legend(fig, [(name, color) for name, color, _ in panels[0][3]], phone)

    most = max(len(categories) * len(series) for _, _, categories, series in panels)
    _both(figure, 10, 3.4 * len(dimensions), _phone_height(len(panels), most), paint)
    figure.caption = (f"Condition {condition}; single-task episodes. By planner: every set; by set: "
                      f"planner {run.primary} only. Whiskers: 95% bootstrap intervals. Across planners the "
                      "cases are the same; across sets they differ, so a set's rate reflects its cases as much as "
                      "the method.")
    return figure


def _ablation_tests(run: _Run, planner: str, condition: str) -> list[dict[str, Any]]:
    rows = [dict(r) for r in run.metrics[planner].get("significance", [])
            if r["condition"] == condition and r.get("reference") == "statewise" and is_ablation(r["method"])
            and r.get("set") == run.main_set]
    for row, adjusted in zip(rows, holm([r["p"] for r in rows]), strict=True):
        row["p_holm_ablations"] = adjusted
    return sorted(rows, key=lambda r: _method_rank(r["method"], []))


def _figure_ablations(run: _Run) -> tuple[_Figure, list[dict[str, Any]]]:
    figure = _Figure(4, "Ablations: the full pipeline against one stage switched off (paper Figure 8)")
    planner = run.primary
    ablations = [m for m in run.methods if is_ablation(m)]
    if "statewise" not in run.methods or not ablations:
        figure.note = ("Skipped: the run has no ablation (no_<stage> methods, e.g. --methods "
                       "statewise,no_attribution,no_resolution,no_repair,no_typed_grounding,no_replan,no_gate)."
                       if "statewise" in run.methods
                       else "Skipped: the ablations need the statewise method as reference.")
        return figure, []
    condition = run.focus
    shown = [m for m in ["statewise", *ablations] if run.group(planner, m, condition)]
    if "statewise" not in shown or len(shown) < 2:
        figure.note = (f"Skipped: no judged {condition} episodes of statewise and an ablation for planner "
                       f"{planner}{run.where()}.")
        return figure, []
    tests = {r["method"]: r for r in _ablation_tests(run, planner, condition)}
    labels = ["Full StateWise" if m == "statewise" else method_label(m) for m in shown]
    rows = {m: row for m in shown if (row := run.group(planner, m, condition))}

    colors = [STATEWISE_COLOR if m == "statewise" else "#9bb7d4" for m in shown]

    def paint(fig: Any, phone: bool) -> None:
        axes = fig.subplots(2, 1) if phone else fig.subplots(1, 2, sharey=True, width_ratios=[1.45, 1])
        for ax, metric in zip(axes, ("OC", "AC"), strict=True):
            _bars(ax, [_wrap(label, 18) for label in labels] if phone else labels,
                  [(metric, colors, [_value(rows[m], metric) for m in shown])], ylabel=f"{metric} (%)",
                  horizontal=True, labels=metric == "AC", phone=phone)
            ax.set_title(metric, loc="left", fontweight="bold")
        ax = axes[0]
        # Room right of the bars for the test result; on a phone it takes two lines.
        ax.set_xlim(0, 215 if phone else 165)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.spines["bottom"].set_bounds(0, 100)
        for index, method in enumerate(shown):
            value = rows[method].get("OC")
            if method == "statewise":
                text = f"{100 * value:.0f}" if value is not None else "n/a"
            elif method in tests:
                test = tests[method]
                delta = test["delta_OC"]
                mark = "*" if test["p_holm_ablations"] < 0.05 else ""
                text = (f"{100 * value:.0f}" + ("\n" if phone else "  ") if value is not None else "") + \
                    (f"Δ{100 * delta:+.0f} pp, p={_pvalue(test['p_holm_ablations'])}{mark}" if delta is not None
                     else "no shared pairs")
            else:
                text = f"{100 * value:.0f}" if value is not None else "n/a"
            ci = rows[method].get("OC_ci")
            top = max(100 * (ci[1] if ci else 0), 100 * (value or 0))
            ax.text(top + 2, index, text, va="center", fontsize=_SMALL[phone])

    _both(figure, 10, 0.42 * len(shown) + 1.4, _phone_height(2, len(shown), per_bar=0.42, legend=False), paint)
    count = len(tests)
    figure.caption = (f"Planner {planner}{run.where()}, condition {condition}, the same cases for every variant. "
                      f"Δ is the OC change against the full pipeline on the shared cases; p is the exact McNemar "
                      f"test, Holm-corrected across the {count} ablation comparison{'s' if count != 1 else ''} "
                      "of this figure (* p<0.05). The terminal table corrects across every method of a "
                      "set and condition, so its p-values can be larger.")
    return figure, list(tests.values())


def _figure_sequences(run: _Run) -> _Figure:
    sequences = [e for e in run.episodes if e["sequence"] is not None]
    lengths = defaultdict(set)
    for e in sequences:
        lengths[(e["set"], e["sequence"])].add(e["step"])
    sizes = sorted({len(steps) for steps in lengths.values()})
    later = "T2–T" + str(sizes[0]) if len(sizes) == 1 else "T2–Tn"
    kind = f"{sizes[0]}-task sequences" if len(sizes) == 1 else "Task sequences"
    figure = _Figure(5, f"{kind}: T1, {later}, AFS and R (paper Table 2)")
    if not sequences:
        figure.note = "Skipped: the run has no sequence (sequence cases carry one store across tasks; RQ5)."
        return figure
    # The chart shows the set with the most sequences (the sequences set in a full run); the
    # table has a row per set.
    counts: defaultdict[str, int] = defaultdict(int)
    for set_name, _ in lengths:
        counts[set_name] += 1
    seq_sets = _ordered((s for s, _ in lengths), run.sets)
    chart_set = max(seq_sets, key=lambda s: (counts[s], s == "sequences"))
    multi_set = len(seq_sets) > 1
    table_rows: list[list[str]] = []
    ablation_rows: list[list[str]] = []
    chart: list[tuple[str, dict[str, Any]]] = []
    multi = len(run.planners) > 1
    for planner in run.planners:
        rows = sorted(run.metrics[planner].get("sequences", []),
                      key=lambda r: (seq_sets.index(r.get("set")) if r.get("set") in seq_sets else 9,
                                     _method_rank(r["method"], list(run.methods)),
                                     CONDITION_ORDER.index(r["condition"]) if r["condition"] in CONDITION_ORDER else 9))
        for row in rows:
            (ablation_rows if is_ablation(row["method"]) else table_rows).append(
                ([_esc(planner)] if multi else []) + ([_esc(row.get("set"))] if multi_set else []) + [
                    _esc(method_label(row["method"])), _esc(row["condition"]), str(row["sequences"]),
                    _pct(row["T1"]), _pct(row["T2+"]), _pct(row["AFS"]), _pct(row["R"]),
                    str(row.get("R_contexts", "")), str(row["unjudged"] or 0)])
            if planner == run.primary and row.get("set") == chart_set and not is_ablation(row["method"]) and (
                    row["method"] == "agent" or row["condition"] == "corrupted"):
                name = (f"{method_label('agent')}\n{CONDITION_LABELS.get(row['condition'], row['condition'])}"
                        if row["method"] == "agent" else method_label(row["method"]))
                chart.append((name, row))
    headers = (["planner"] if multi else []) + (["set"] if multi_set else []) + [
        "method", "condition", "sequences", "T1 %", f"{later} %", "AFS %", "R %", "R contexts", "unjudged"]
    left = 2 + int(multi) + int(multi_set)
    figure.extra_html = _table(headers, table_rows, cls="metrics", left=left,
                               caption=f"Table 2: correct-and-safe rates (%) of the first task (T1) and of the later "
                                       f"tasks ({later}), AFS (every later task correct and safe) and R (later "
                                       f"contexts that retrieve the repaired record); sequence length"
                                       f"{'s' if len(sizes) > 1 else ''} {', '.join(map(str, sizes))} tasks.")
    if ablation_rows:
        figure.extra_html += (f"<details><summary>Ablations on the sequences ({len(ablation_rows)} rows)</summary>"
                              f"{_table(headers, ablation_rows, cls='metrics', left=left)}</details>")
    if not chart:
        figure.note = "No chart: no agent or corrupted-memory sequence row for the primary planner."
        return figure
    metrics = (("T1", "T1", "#9bb7d4"), ("T2+", later, STATEWISE_COLOR), ("AFS", "AFS", "#2a9d8f"),
               ("R", "R (repaired record retrieved)", "#e08e45"))

    def paint(fig: Any, phone: bool) -> None:
        ax = fig.subplots()
        series = [(label, color, [(row.get(key), None) for _, row in chart]) for key, label, color in metrics]
        _bars(ax, [_wrap(name, 16) for name, _ in chart], series, ylabel="rate (%)", mark_missing=False,
              horizontal=phone, phone=phone)
        _legend(fig, [(label, color) for _, label, color in metrics], phone)

    _both(figure, max(7.0, 1.3 * len(chart) + 2), 3.6, _phone_height(1, 4 * len(chart)) + 0.3, paint)
    figure.caption = (f"Planner {run.primary}{f', set {chart_set}' if multi_set else ''}, {counts[chart_set]} "
                      "sequence(s); between tasks the workspace and "
                      "conversation are reset and only the store carries over. R is drawn only where the method "
                      "repaired the target record (no bar otherwise); sequence rates have no intervals, the "
                      "sequences are too few.")
    return figure


def _figure_transfer(run: _Run) -> _Figure:
    figure = _Figure(6, "Transfer: seen against unseen configurations (paper Figure 9)")
    condition = run.focus
    singles = [e for e in run.singles(run.primary) if e["condition"] == condition]
    # The split is per set (transfer.json covers the primary set): the first set with transfer tags.
    split = next(((s, g) for s in run.sets if (g := transfer_groups([e for e in singles if e["set"] == s]))),
                 None)
    if split is None:
        figure.note = ("Skipped: no episode carries a transfer tag (unseen, fully_unseen or new_*: from "
                       "benchmarks/cases/transfer.json for the primary set, or in the case's tags), so seen and "
                       "unseen cases cannot be told apart.")
        return figure
    set_name, found = split
    groups = [(label[:1].upper() + label[1:], tag, members) for tag, label, members in found]
    methods = [m for m in ("statewise", "agent") if m in run.methods] or run.methods[:1]
    cases = {name: len({e["case"] for e in members}) for name, _, members in groups}
    categories = [f"{name}\n({cases[name]} case{'s' if cases[name] != 1 else ''})" for name, _, _ in groups]
    data: dict[tuple[str, str], dict[str, Any] | None] = {}
    for method in methods:
        for name, tag, members in groups:
            chosen = [e for e in members if e["method"] == method]
            # The same label as metrics.transfer, so the intervals match the terminal table.
            data[(method, name)] = outcomes(chosen, resamples=run.resamples, seed=run.seed,
                                            label=f"transfer|{method}|{condition}|{tag}") if chosen else None
    stacked = len(groups) * len(methods) > 8

    def paint(fig: Any, phone: bool) -> None:
        axes = fig.subplots(3, 1) if phone else fig.subplots(3, 1, sharex=True) if stacked else fig.subplots(1, 3)
        for ax, metric in zip(axes, ("OC", "AC", "UAR"), strict=True):
            series = [(method_label(m), STATEWISE_COLOR if m == "statewise" else AGENT_COLOR,
                       [_value(data[(m, name)], metric) for name, _, _ in groups]) for m in methods]
            _bars(ax, categories, series, ylabel=f"{metric} (%)" + (" ↓" if metric == "UAR" else ""),
                  labels=len(groups) * len(methods) <= 16, horizontal=phone, phone=phone)
            ax.set_title(metric, loc="left", fontweight="bold")
        _legend(fig, [(method_label(m), STATEWISE_COLOR if m == "statewise" else AGENT_COLOR) for m in methods],
                phone)

    phone_height = _phone_height(3, len(groups) * len(methods))
    if stacked:
        _both(figure, max(7.0, 0.75 * len(groups) * len(methods) + 2), 8.0, phone_height, paint)
    else:
        _both(figure, 10, 3.4, phone_height, paint)
    figure.caption = (f"Planner {run.primary}, set {set_name}, condition {condition}. A case is unseen when its "
                      "tags include unseen, fully_unseen or new_* (from transfer.json: a repository, tool "
                      "operation, state type or state-action pair the development set lacks); every other case "
                      "counts as seen, except cases transfer.json does not list, which are left out. A case can "
                      "fall in several unseen groups. Whiskers: 95% bootstrap intervals.")
    return figure


# --- sections -----------------------------------------------------------------------------


def _header(run: _Run) -> str:
    data = run.data
    episodes = run.episodes
    judged = sum(1 for e in episodes if e["judged"])
    singles = {(e["set"], e["case"]) for e in episodes if e["sequence"] is None}
    sequences = {(e["set"], e["sequence"]) for e in episodes if e["sequence"] is not None}
    tasks = {(e["set"], e["sequence"], e["case"]) for e in episodes if e["sequence"] is not None}
    command = data.get("command")
    if isinstance(command, (list, tuple)):
        command = shlex.join(str(c) for c in command)
    started = str(data.get("started") or "")
    date = started.replace("T", " ").replace("+00:00", " UTC") if started else "not recorded"
    items = [
        ("planner" + ("s" if len(run.planners) > 1 else ""), ", ".join(run.planners)),
        ("run started", date),
        ("case sets", ", ".join(run.sets) or "–"),
        ("cases", f"{len(singles)} single-task cases, {len(sequences)} sequences ({len(tasks)} tasks)"),
        ("methods", ", ".join(run.methods)),
        ("conditions", ", ".join(run.conditions)),
        ("episodes", f"{len(episodes)} ({judged} judged, {len(episodes) - judged} unjudged)"),
        ("seed / bootstrap", f"seed {run.seed}, {run.resamples} resamples, 95% percentile intervals"),
        ("jobs / wall time", f"{data.get('jobs', '–')} / {float(data.get('wall_seconds') or 0):.1f} s"
                             + (" (quick subset)" if data.get("quick") else "")),
        ("format", str(data.get("format") or "–")),
    ]
    rows = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in items)
    if command:
        rows += f"<dt>command</dt><dd><code>{_esc(command)}</code></dd>"
    return f'<header><h1>StateWise benchmark report</h1><dl class="meta">{rows}</dl></header>'


def _set_rank(run: _Run, row: Mapping[str, Any]) -> int:
    name = row.get("set")
    return run.sets.index(name) if isinstance(name, str) and name in run.sets else len(run.sets)


def _metrics_table(run: _Run) -> str:
    multi = len(run.planners) > 1
    multi_set = len(run.sets) > 1
    lead = (["planner"] if multi else []) + (["set"] if multi_set else []) + ["method", "condition", "n (act/stop)"]
    outcome = ["OC", "AC", "CS", "UAR ↓"]
    attribution = ["AP", "AR", "AF1"]
    cost = ["MC", "TC", "IC", "VC"]
    head = ("<tr>" + "".join(f'<th rowspan="2">{h}</th>' for h in lead)
            + '<th colspan="4">outcomes, % (95% CI)</th><th colspan="3">attribution</th>'
            + '<th colspan="4">cost per episode</th><th colspan="4">cost per correct outcome</th>'
            + '<th rowspan="2">unjudged</th></tr><tr>'
            + "".join(f"<th>{h}</th>" for h in outcome + attribution + cost + cost) + "</tr>")
    rows = []
    for planner in run.planners:
        groups = sorted(run.metrics[planner]["groups"],
                        key=lambda r: (_set_rank(run, r), _method_rank(r["method"], list(run.methods)),
                                       run.conditions.index(r["condition"]) if r["condition"] in run.conditions else 9))
        for g in groups:
            cells = ([_esc(planner)] if multi else []) + ([_esc(g.get("set"))] if multi_set else []) + [
                f'<span title="{_esc(g["method"])}">{_esc(method_label(g["method"]))}</span>', _esc(g["condition"]),
                f"{g['n']} ({g['n_act']}/{g['n_stop']})"]
            for metric in ("OC", "AC", "CS", "UAR"):
                cells.append(f"{_pct(g.get(metric))} {_ci(g.get(f'{metric}_ci'))}")
            cells += [_num(g.get("AP")), _num(g.get("AR")), _num(g.get("AF1"))]
            cells += [_num(g.get("MC"), 1), _num(g.get("TC"), 1), _num(g.get("IC")), _num(g.get("VC"), 1)]
            cells += [_num(g.get("MC_per_success"), 1), _num(g.get("TC_per_success"), 1),
                      _num(g.get("IC_per_success")), _num(g.get("VC_per_success"), 1)]
            unjudged = g.get("unjudged") or 0
            cells.append(f'<span class="warn">{unjudged}</span>' if unjudged else "0")
            rows.append(cells)
    caption = ("Table 1 metrics over the judged single-task episodes of each (set, method, condition). OC: correct and "
               "safe over all tasks; AC over tasks that require an operation; CS over tasks that require a safe "
               "stop; UAR: episodes with a safety violation (lower is better). AP/AR/AF1: record-level attribution "
               "(methods that attribute). MC model calls, TC thousands of tokens, IC user interactions, VC verifier "
               "calls. Unjudged episodes are excluded from every rate.")
    return _table([], rows, cls="metrics", caption=caption, header_html=head, left=len(lead) - 1)


def _significance_table(run: _Run) -> str:
    multi = len(run.planners) > 1
    multi_set = len(run.sets) > 1
    rows = []
    for planner in run.planners:
        tests = sorted(run.metrics[planner].get("significance", []),
                       key=lambda r: (_set_rank(run, r),
                                      run.conditions.index(r["condition"]) if r["condition"] in run.conditions else 9,
                                      _method_rank(r["method"], list(run.methods))))
        for r in tests:
            delta = "–" if r["delta_OC"] is None else f"{100 * r['delta_OC']:+.1f}"
            p_holm = _pvalue(r["p_holm"])
            rows.append(([_esc(planner)] if multi else []) + ([_esc(r.get("set"))] if multi_set else []) + [
                _esc(r["condition"]), _esc(method_label(r["method"])), str(r["pairs"]), delta,
                str(r["reference_only"]), str(r["method_only"]), _pvalue(r["p"]),
                f"<b>{p_holm}</b>" if r.get("significant") else p_holm])
    if not rows:
        return '<p class="note">No paired tests: the run has no method to compare with statewise.</p>'
    headers = (["planner"] if multi else []) + (["set"] if multi_set else []) + [
        "condition", "method", "pairs", "ΔOC pp", "statewise only", "method only", "p", "p (Holm)"]
    return _table(headers, rows, cls="metrics",
                  caption="Every method against statewise on the same (set, case, condition) pairs: exact McNemar "
                          "on correct-and-safe, Holm-corrected within each set and condition (bold: p&lt;0.05).",
                  left=len(headers) - 6)


def _breakdown_table(run: _Run) -> str:
    planner = run.primary
    condition = run.focus
    methods = [m for m in run.methods if not is_ablation(m)]
    cells: dict[tuple[str, str, str], dict[str, Any]] = {}
    keys: list[tuple[str, str]] = []
    for row in run.metrics[planner].get("breakdowns", []):
        if row["condition"] != condition or row["method"] not in methods or row["by"] == "expected" \
                or row.get("set") != run.main_set:
            continue
        if row["by"] == "tag" and row["value"] == "(untagged)" and not any(
                e["tags"] for e in run.singles(planner) if e["set"] == run.main_set):
            continue
        key = (row["by"], str(row["value"]))
        if key not in keys:
            keys.append(key)
        cells[(*key, row["method"])] = row
    if not keys:
        return ""
    order = {"category": 0, "defect": 1, "tag": 2}
    keys.sort(key=lambda k: (order.get(k[0], 9), k[1]))
    rows = []
    for by, value in keys:
        row = [_esc(by), _esc(value)]
        for method in methods:
            c = cells.get((by, value, method))
            row.append("" if c is None else f"{_pct(c.get('OC'), 0)} / {_pct(c.get('UAR'), 0)} "
                                           f'<span class="ci">n={c["n"]}</span>')
        rows.append(row)
    return _table(["by", "value", *(_esc(method_label(m)) for m in methods)], rows, cls="metrics", left=2,
                  caption=f"OC % / UAR % by case category, defect and tag (planner {_esc(planner)}, set "
                          f"{_esc(run.main_set)}, condition {_esc(condition)}); small groups, no intervals.")


def _figure_html(figure: _Figure) -> str:
    title = f"<h3>Figure {figure.number}. {_esc(figure.title)}</h3>"
    if figure.image is None and not figure.extra_html:
        return (f'<section class="figure skipped" id="figure-{figure.number}">{title}'
                f'<p class="note">{_esc(figure.note)}</p></section>')
    image = _picture(figure) if figure.image else ""
    note = f'<p class="note">{_esc(figure.note)}</p>' if figure.note else ""
    caption = f'<p class="caption">{_esc(figure.caption)}</p>' if figure.caption else ""
    return (f'<section class="figure" id="figure-{figure.number}">{title}{figure.extra_html}{image}{caption}{note}'
            "</section>")


def _fonts(kind: str, image: _Image) -> str:
    legend = f' data-{kind}-legend-font="{image.legend_font_px}"' if image.legend_font_px is not None else ""
    return f' data-{kind}-min-font="{image.min_font_px}"{legend}'


def _picture(figure: _Figure) -> str:
    """The figure's image: the phone drawing below 760 px, the wide one above. The data-*-font
    attributes give the smallest and the legend text in image pixels (scaled by the shown
    width over the image's own, they are the CSS pixels the reader sees)."""
    assert figure.image is not None
    alt = f"Figure {figure.number}: {_esc(figure.title)}"
    source = ""
    fonts = _fonts("wide", figure.image)
    if figure.phone is not None:
        source = f'<source media="(max-width: 760px)" srcset="data:image/png;base64,{figure.phone.png}">'
        fonts += _fonts("phone", figure.phone)
    return (f"<picture>{source}"
            f'<img src="data:image/png;base64,{figure.image.png}" alt="{alt}"{fonts}></picture>')


def _outcome(episode: Mapping[str, Any]) -> str:
    if not episode["judged"]:
        return "unjudged"
    if episode.get("v"):
        return "unsafe"
    return "pass" if episode.get("y") else "fail"


def _detail(episode: Mapping[str, Any], limit: int = 240) -> str:
    kind = _outcome(episode)
    if kind == "unjudged":
        text = episode.get("unjudged_reason") or "unjudged"
    else:
        failed = [c for c in (episode.get("invariants") or []) + (episode.get("goal") or []) if not c.get("passed")]
        action = (episode.get("action") or {}).get("operation")
        decided = f"{episode.get('verdict') or '?'}" + (f" {action}" if action else "")
        if failed:
            text = decided + "; failed: " + "; ".join(f"{c.get('kind')}: {c.get('detail', '')}" for c in failed)
        else:
            text = decided + ("; " + episode["reason"] if episode.get("reason") else "")
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _matrix(run: _Run) -> str:
    multi = len(run.planners) > 1
    multi_set = len(run.sets) > 1
    columns = [(p, m, c) for p in run.planners for m in run.methods for c in run.conditions
               if any(e["planner"] == p and e["method"] == m and e["condition"] == c for e in run.episodes)]
    cells: dict[tuple[Any, ...], dict[str, Any]] = {}
    info: dict[tuple[Any, ...], dict[str, Any]] = {}
    for e in run.episodes:
        row = (e["set"], e["sequence"] or "", e["step"] if e["sequence"] else 0, e["case"])
        cells[(row, e["planner"], e["method"], e["condition"])] = e
        info.setdefault(row, e)
    # single cases first (by set, category, id), then the sequences task by task
    rows = sorted(info, key=lambda r: (r[1] != "", r[0], r[1] or str(info[r].get("category")), r[2], r[3]))
    head = ""
    if multi:
        spans: defaultdict[str, int] = defaultdict(int)
        for p, _, _ in columns:
            spans[p] += 1
        head += ('<tr><th colspan="4"></th>'
                 + "".join(f'<th colspan="{spans[p]}">{_esc(p)}</th>' for p in dict.fromkeys(c[0] for c in columns))
                 + "</tr>")
    groups: list[tuple[tuple[str, str], int]] = []
    for p, m, _ in columns:
        if groups and groups[-1][0] == (p, m):
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append(((p, m), 1))
    head += ('<tr><th rowspan="2" class="left case">case</th><th rowspan="2">category</th><th rowspan="2">defect</th>'
             '<th rowspan="2">expects</th>'
             + "".join(f'<th colspan="{n}" class="mgroup gstart">{_esc(method_label(m))}</th>' for (_, m), n in groups)
             + "</tr><tr>"
             + "".join(f'<th class="cond{" gstart" if i == 0 or columns[i - 1][:2] != col[:2] else ""}" '
                       f'title="{_esc(col[2])}"><span>{_esc(col[2])}</span></th>' for i, col in enumerate(columns))
             + "</tr>")
    body = []
    counts: defaultdict[str, int] = defaultdict(int)
    previous_sequence = None
    for row in rows:
        e0 = info[row]
        set_name, sequence, step, case = row
        name = f"T{step + 1} {case}" if sequence else case
        if multi_set:
            name = f"{set_name}/{name}"
        if sequence and sequence != previous_sequence:
            body.append(f'<tr class="sep"><td colspan="{4 + len(columns)}">sequence {_esc(sequence)}</td></tr>')
        previous_sequence = sequence or None
        tds = [f'<td class="left case">{_esc(name)}</td>',
               f"<td class=\"left small\">{_esc(e0.get('category') or '')}</td>",
               f"<td class=\"left small\">{_esc(e0.get('defect') or '')}</td>",
               f"<td class=\"small\">{_esc(e0.get('expected') or '')}</td>"]
        for i, (p, m, c) in enumerate(columns):
            start = " gstart" if i == 0 or columns[i - 1][:2] != (p, m) else ""
            found = cells.get((row, p, m, c))
            if found is None:
                tds.append(f'<td class="none{start}"></td>')
                continue
            kind = _outcome(found)
            counts[kind] += 1
            symbol, cls, _ = OUTCOME_STYLE[kind]
            # A tap opens the cell's details (no script: <details>); a pointer also shows them on hover.
            tds.append(f'<td class="o {cls}{start}"><details><summary>{symbol}</summary>'
                       f'<span class="tip">{_esc(f"{m} / {c}: {kind} — {_detail(found)}")}</span></details></td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    legend = " ".join(f'<span class="o {cls}">{symbol}</span> {_esc(text)} ({counts[kind]})'
                      for kind, (symbol, cls, text) in OUTCOME_STYLE.items())
    return (f'<p class="legend">{legend}. Tap a cell (or hover it) for the verdict and the failed checks, tap it again to close; empty: not run.</p>'
            f'<div class="scroll"><table class="matrix"><thead>{head}</thead><tbody>{"".join(body)}</tbody>'
            "</table></div>")


def _failures(run: _Run) -> str:
    bad = [e for e in run.episodes if _outcome(e) != "pass"]
    if not bad:
        return f'<p class="note">{"Every episode passed." if run.episodes else "The run has no episode."}</p>'
    multi = len(run.planners) > 1
    order = {m: i for i, m in enumerate(run.methods)}
    bad.sort(key=lambda e: (e["planner"], order.get(e["method"], 99), e["condition"], e["sequence"] or "", e["step"],
                            e["case"]))
    rows = [([_esc(e["planner"])] if multi else []) + [
        _esc(e["method"]), _esc(e["condition"]),
        _esc(f"{e['sequence']} · T{e['step'] + 1} {e['case']}" if e["sequence"] else e["case"]),
        f'<span class="o {OUTCOME_STYLE[_outcome(e)][1]}">{OUTCOME_STYLE[_outcome(e)][0]}</span> {_outcome(e)}',
        _esc(_detail(e, 400))] for e in bad]
    headers = (["planner"] if multi else []) + ["method", "condition", "case", "outcome", "what happened"]
    unjudged = sum(1 for e in bad if _outcome(e) == "unjudged")
    summary = f"{len(bad)} episodes did not pass" + (f" ({unjudged} unjudged)" if unjudged else "")
    return f"<details><summary>{summary}</summary>{_table(headers, rows, cls='failures')}</details>"


def _statement(run: _Run) -> str:
    planners = run.planners
    rule_based = [p for p in planners if p == "rules" or p.startswith("noisy:")]
    model_based = [p for p in planners if p not in rule_based]
    n_cases = len({(e["set"], e["case"]) for e in run.episodes if e["sequence"] is None})
    n_sequences = len({(e["set"], e["sequence"]) for e in run.episodes if e["sequence"] is not None})
    unjudged = sum(1 for e in run.episodes if not e["judged"])
    baselines = [m for m in run.methods if is_baseline(m)]
    group_sizes = [g["n"] for p in planners for g in run.metrics[p]["groups"] if g["n"]]
    smallest = min(group_sizes) if group_sizes else 0
    can = [
        (f"How often each method reached the case's goal without breaking a safety invariant on these "
         f"{n_cases} single-task cases and {n_sequences} sequences, judged by executable checks on real sandboxes "
         "(files, git repositories, interpreters) after the method's action ran."),
        ("Paired differences between methods on identical cases and conditions (exact McNemar), and what "
         "switching one pipeline stage off changes on these cases."),
        "Whether a repaired record is retrieved and keeps later tasks of a sequence correct (R, AFS).",
    ]
    cannot = []
    if rule_based:
        cannot.append(
            f"Planner{'s' if len(rule_based) > 1 else ''} {', '.join(rule_based)}: StateWise's deterministic rule "
            "planner (noisy:P adds seeded random mistakes). It is not an LLM: it follows its playbook and the "
            "records it is given, so the agent's failures under corrupted memory are failures by construction, "
            "and the numbers show the guard's mechanics on these cases, not how an LLM agent would fare. They do "
            "not reproduce the paper's figures, which come from LLM planners on 150 cases.")
    if model_based:
        cannot.append(
            f"Model planner{'s' if len(model_based) > 1 else ''} {', '.join(model_based)}: one run at seed "
            f"{run.seed}; model outputs vary between runs and model versions, and the intervals do not cover that.")
    if baselines:
        cannot.append(
            f"Baselines ({', '.join(method_label(m) for m in baselines)}) are in-repo re-implementations of the idea, "
            "not the original systems. Their numbers depend on the simulated developer (a scripted clarifier that "
            "answers from the case's intent, an approver that approves what the case lists) and on how the cases "
            "are written.")
    else:
        cannot.append("No baseline ran, so nothing here compares StateWise with other interventions; where "
                      "baselines are added, their numbers will depend on the simulated developer (scripted answers "
                      "and approvals from each case) and on the cases.")
    if "dev" in run.sets:
        cannot.append("The dev set is the development set: the pipeline and playbook were tuned on it, so its "
                      "rates are not a held-out evaluation.")
    cannot.append(
        f"The intervals are bootstraps over the episodes of a group (smallest group n={smallest}); the cases are "
        "authored, not sampled from real sessions, each injects a single-record defect, and some side effects "
        "(package installs) are simulated by the bench executor, so the rates do not generalise to deployed agents.")
    if unjudged:
        cannot.append(f"{unjudged} episode(s) could not be judged; they are excluded from every rate (never counted "
                      "as passes) and listed below the matrix.")

    def items(texts: list[str]) -> str:
        return "".join(f"<li>{_esc(text)}</li>" for text in texts)

    return (f'<section class="statement"><h2>What this comparison can and cannot show</h2>'
            f"<h3>It can show</h3><ul>{items(can)}</ul><h3>It cannot show</h3><ul>{items(cannot)}</ul></section>")


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1400px;
padding:16px 24px 48px;color:#1d1d1f;line-height:1.4;background:#fff}
h1{font-size:1.6em;margin:0.2em 0 0.4em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd;
padding-bottom:4px}h3{font-size:1.02em;margin:1.2em 0 0.4em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0;font-size:0.92em}
dl.meta dt{color:#555}dl.meta dd{margin:0}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:0.92em;
background:#f3f3f3;padding:1px 4px;border-radius:3px;word-break:break-all}
nav{font-size:0.9em;margin:12px 0;padding:6px 10px;background:#f6f8fa;border-radius:4px}
nav a{margin-right:12px;color:#1f5fa8;text-decoration:none}
.scroll{overflow-x:auto;margin:6px 0 4px}.table-caption{margin-bottom:12px}
table{border-collapse:collapse;font-size:0.82em}caption{caption-side:bottom;text-align:left;color:#555;
font-size:0.92em;padding-top:4px;max-width:1100px}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f3f5f7;font-weight:600;text-align:center}td.l,th.left,td.left{text-align:left}
table.metrics tbody tr:nth-child(even){background:#fafafa}
.ci{color:#888;font-size:0.85em}.id{color:#999;font-size:0.85em}.warn{color:#b00020;font-weight:600}
.figure img{max-width:100%;height:auto;display:block;margin:6px 0}
.caption{color:#444;font-size:0.9em;margin:2px 0 6px;max-width:1100px}
.note{color:#6b5900;background:#fff8dc;border-left:3px solid #e0c060;padding:4px 8px;font-size:0.9em;
max-width:1100px}
.figure.skipped h3{color:#777}
table.matrix td,table.matrix th{padding:1px 3px;font-size:0.95em}
table.matrix th.cond{font-weight:400;color:#555;vertical-align:bottom;padding:3px 1px}
table.matrix th.cond span{writing-mode:vertical-rl;transform:rotate(180deg);font-size:0.9em}
table.matrix td.small{font-size:0.85em;color:#444}table.matrix td.o{min-width:1.3em}
table.matrix th.mgroup{font-size:0.85em;white-space:normal;vertical-align:bottom;line-height:1.15}
table.matrix .gstart{border-left:2px solid #9aa4b0}
table.matrix .case{position:sticky;left:0;z-index:1;background:#fff}
table.matrix th.case{background:#f3f5f7}
table.matrix td.case{font-family:ui-monospace,Menlo,Consolas,monospace}
table.matrix tr.sep td{background:#eef2f7;text-align:left;font-weight:600}
.o{text-align:center;font-weight:700;display:inline-block;min-width:1.2em}
td.o{display:table-cell}
.pass{background:#d9f0dd;color:#1b6e2c}.fail{background:#fde7c8;color:#8a4b00}
.unsafe{background:#f8c9c4;color:#9b1c10}.unjudged{background:#e4e4e4;color:#555}td.none{background:#fbfbfb}
.legend{font-size:0.88em}.legend .o{padding:0 3px;border-radius:2px}
table.failures td:last-child{white-space:normal;text-align:left;max-width:700px}
.statement{background:#f6f8fa;border:1px solid #dde3ea;border-radius:6px;padding:4px 18px 10px;margin-top:28px}
.statement h2{border:none;margin-top:0.8em}.statement li{margin:4px 0}
footer{margin-top:32px;color:#888;font-size:0.8em}
td.o{position:relative;padding:0}td.o details{display:block}
td.o summary{list-style:none;cursor:pointer;padding:1px 3px}td.o summary::-webkit-details-marker{display:none}
td.o .tip{display:none;position:absolute;z-index:3;left:0;top:100%;width:24em;white-space:normal;text-align:left;
font-weight:400;font-size:13px;color:#1d1d1f;background:#fff;border:1px solid #9aa4b0;border-radius:4px;
padding:4px 8px;box-shadow:0 2px 6px rgba(0,0,0,.15)}
td.o details[open] .tip{display:block}td.o details[open] summary{outline:2px solid #1f5fa8}
@media (hover:hover){td.o:hover .tip{display:block}}
@media (max-width:760px){
body{padding:10px 12px 40px}h1{font-size:1.35em}
table.matrix td.small{font-size:11px}.ci,.id{font-size:11px}
td.o details[open] .tip{position:fixed;left:8px;right:8px;top:auto;bottom:8px;width:auto;font-size:15px}
}
"""


def render_html(result_or_json: BenchResult | Mapping[str, Any] | str | Path) -> str:
    """The report as one HTML string (see :func:`write_html_report`)."""
    run = _prepare(_load(result_or_json))
    figures: list[_Figure] = [_figure_conditions(run), _figure_baselines(run), _figure_settings(run)]
    ablation, tests = _figure_ablations(run)
    figures += [ablation, _figure_sequences(run), _figure_transfer(run)]
    if tests:
        ablation.extra_html = _table(
            ["variant", "pairs", "ΔOC pp", "full only", "variant only", "p", "p (Holm, ablations)"],
            [[_esc(method_label(t["method"])), str(t["pairs"]),
              "–" if t["delta_OC"] is None else f"{100 * t['delta_OC']:+.1f}", str(t["reference_only"]),
              str(t["method_only"]), _pvalue(t["p"]),
              (f"<b>{_pvalue(t['p_holm_ablations'])}</b>" if t["p_holm_ablations"] < 0.05
               else _pvalue(t["p_holm_ablations"]))] for t in tests], cls="metrics")
    drawn = sum(1 for f in figures if f.image)
    title = f"StateWise bench — {', '.join(run.planners)} — {', '.join(run.sets) or 'no sets'}"
    nav = ('<nav><a href="#tables">Tables</a><a href="#figures">Figures</a><a href="#cases">Cases</a>'
           '<a href="#statement">Limits</a></nav>')
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        _header(run),
        nav,
        '<h2 id="tables">Metrics</h2>',
        _metrics_table(run),
        "<h3>Paired tests</h3>",
        _significance_table(run),
        "<h3>Breakdown</h3>",
        _breakdown_table(run) or '<p class="note">No breakdown rows.</p>',
        f'<h2 id="figures">Figures <span class="ci">({drawn} of {len(figures)} drawn)</span></h2>',
        *(_figure_html(f) for f in figures),
        '<h2 id="cases">Per-case outcomes</h2>',
        _matrix(run),
        _failures(run),
        f'<div id="statement">{_statement(run)}</div>',
        ("<footer>Generated by statewise.bench.html from a statewise-bench/1 result; self-contained, no scripts "
         "or network resources.</footer>"),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def require_matplotlib() -> None:
    """Raise MissingExtraError (naming ``pip install 'statewise[report]'``) without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError as error:
        raise MissingExtraError.of("the HTML report", error) or error from None


def write_html_report(result_or_json: BenchResult | Mapping[str, Any] | str | Path, path: str | Path) -> Path:
    """Render a benchmark result (a BenchResult, its JSON dict, or the JSON file's path) as one
    self-contained HTML file at ``path``; returns the path.

    Figures are inline PNGs; a figure whose data the run lacks is replaced by a one-line note.
    The same input always renders to the same bytes."""
    require_matplotlib()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(result_or_json), encoding="utf-8")
    return path
