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

import shlex
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.bench.figures import (
    _Figure,
    _figure_ablations,
    _figure_baselines,
    _figure_conditions,
    _figure_sequences,
    _figure_settings,
    _figure_transfer,
    _Image,
)
from statewise.bench.report_run import (
    OUTCOME_STYLE,
    _ci,
    _esc,
    _load,
    _method_rank,
    _num,
    _pct,
    _prepare,
    _pvalue,
    _Run,
    _table,
    is_ablation,
    is_baseline,
    method_label,
)
from statewise.errors import MissingExtraError

if TYPE_CHECKING:
    from statewise.bench.runner import BenchResult

__all__ = ["render_html", "write_html_report"]

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
