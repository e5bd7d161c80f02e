"""The HTML report's figures (matplotlib, drawn twice: wide for a screen, narrow for a phone).
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from statewise.bench.metrics import holm, outcomes, transfer_groups
from statewise.bench.report_run import (
    AGENT_COLOR,
    CONDITION_COLORS,
    CONDITION_LABELS,
    CONDITION_ORDER,
    PALETTE,
    STATEWISE_COLOR,
    _esc,
    _method_rank,
    _ordered,
    _pct,
    _pvalue,
    _Run,
    _table,
    is_ablation,
    is_baseline,
    method_label,
)

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
