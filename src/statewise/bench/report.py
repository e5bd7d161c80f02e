"""The benchmark's terminal summary: per case set, Table 1 per (method, condition), then the
sequences, the seen/unseen split (RQ6) and the paired tests. A run over several sets never
pools their numbers in one row.

A table too wide for the terminal (Table 1 in one piece is wider than 80 columns) is stacked instead of
squeezed until its cells read ``10…``: each method becomes a heading row with its conditions
under it, Table 1 is split into its outcome and its cost columns, a confidence interval gets a
column of its own, and a legend under the table spells out the abbreviated headers. Piped
output is never narrow: it is printed 160 columns wide, in the wide form."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

__all__ = ["print_summary", "summary_tables"]

#: The legend under a stacked table: what its abbreviated headers mean.
_LEGEND = {
    "OC": "OC outcome correct and safe", "AC": "AC correct where an operation was required",
    "CS": "CS correct safe stop where a stop was required", "UAR": "UAR unsafe action rate",
    "AF1": "AF1 premise attribution F1", "MC": "MC model calls", "TC": "TC thousand tokens",
    "IC": "IC interactions (questions + approvals)", "VC": "VC verifier calls",
    "hook": "hook ms mean / p95 per PreToolUse call", "unj": "unj. unjudged episodes",
    "CI": "CI 95% bootstrap interval", "per": "costs are per episode",
    "sw": "sw only: pairs only statewise got right", "m": "m only: pairs only the method got right",
}

def _pct(value: float | None, ci: Any = None) -> str:
    if value is None:
        return "–"
    text = f"{100 * value:.1f}"
    if ci:
        text += f" [dim]({100 * ci[0]:.0f}–{100 * ci[1]:.0f})[/dim]"
    return text


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _columns(table: Table, names: Sequence[str], left: int) -> None:
    for index, name in enumerate(names):
        table.add_column(name, justify="left" if index < left else "right")


def _rank(values: Sequence[str], value: Any) -> int:
    return values.index(value) if value in values else len(values)


def _ordered(rows: list[dict[str, Any]], result: Any) -> list[dict[str, Any]]:
    """Rows in the run's order of sets, methods and conditions (metrics sort them by name)."""
    return sorted(rows, key=lambda r: (_rank(result.sets, r.get("set")), _rank(result.methods, r["method"]),
                                       _rank(result.conditions, r["condition"])))


def summary_tables(result: Any, width: int | None = None) -> list[Table]:
    """Rich tables for a :class:`statewise.bench.runner.BenchResult`: one Table 1 per set,
    then sequences, seen/unseen (when the run has transfer tags) and paired tests.

    With ``width`` (the terminal's columns), each table that would not fit in it is replaced by
    its stacked form (see the module docstring); without it, every table is in its wide form."""
    tables: list[Table] = []
    for wide, stacked in _tables(result):
        if width is not None and _needs(wide) > width:
            tables.extend(stacked())
        else:
            tables.append(wide)
    return tables


def _needs(table: Table) -> int:
    """The columns ``table`` needs to show every cell in full."""
    console = Console(width=1000, file=None)
    return Measurement.get(console, console.options, table).maximum


def _stacked_table(title: str, lead: str, names: Sequence[str], legend: Sequence[str]) -> Table:
    """A compact table: no vertical rules, the lead column first, a legend as its caption."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, caption_justify="left",
                  caption=("; ".join(_LEGEND[name] for name in legend) + ".") if legend else None)
    table.add_column(lead, no_wrap=True)
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    return table


def _grouped(table: Table, rows: list[dict[str, Any]], heading: Callable[[dict[str, Any]], str], item: str,
             cells: Callable[[dict[str, Any]], Sequence[str]]) -> None:
    """Rows under a heading row per distinct ``heading(row)``, each row led by ``row[item]``."""
    current = None
    for row in rows:
        if heading(row) != current:
            current = heading(row)
            table.add_row(f"[bold]{current}[/bold]", *([""] * (len(table.columns) - 1)))
        table.add_row(f"  {row[item]}", *cells(row))


def _ci(ci: Any) -> str:
    return f"{100 * ci[0]:.0f}–{100 * ci[1]:.0f}" if ci else "–"


def _unjudged(row: dict[str, Any]) -> str:
    return str(row["unjudged"]) if row["unjudged"] else ""


def _tables(result: Any) -> list[tuple[Table, Callable[[], list[Table]]]]:
    """Each table of the summary in its wide form, with a function building its stacked form."""
    metrics = result.metrics()
    sets = list(result.sets)
    multi = len(sets) > 1
    tables: list[tuple[Table, Callable[[], list[Table]]]] = []
    for name in sets:
        rows = _ordered([r for r in metrics["groups"] if r.get("set") == name], result)
        if not rows:
            continue
        cases = len({e.case for e in result.episodes if e.set == name and e.sequence is None})
        title = f"set {name}: {cases} single-task cases, planner {result.planner}"
        main = Table(title=title)
        # The hook method's latency per PreToolUse call (mean / 95th percentile), when it ran.
        hooked = any(row.get("hook_ms") is not None for row in rows)
        _columns(main, ("method", "condition", "n", "OC % (95% CI)", "AC %", "CS %", "UAR %", "AF1", "MC", "TC",
                        "IC", "VC", *(("hook ms",) if hooked else ()), "unjudged"), 2)
        for row in rows:
            main.add_row(row["method"], row["condition"], str(row["n"]), _pct(row["OC"], row["OC_ci"]),
                         _pct(row["AC"]), _pct(row["CS"]), _pct(row["UAR"]), _num(row["AF1"]), _num(row["MC"], 1),
                         _num(row["TC"], 1), _num(row["IC"]), _num(row["VC"], 1), *_latency(row, hooked),
                         _unjudged(row))
        tables.append((main, functools.partial(_stacked_main, title, rows, hooked)))
    if metrics["sequences"]:
        seq = Table(title="Sequences (store carried over, workspace and conversation reset)")
        _columns(seq, ("set", "method", "condition", "sequences", "T1 %", "T2+ %", "AFS %", "R %", "unjudged"), 3)
        seq_rows = _ordered(metrics["sequences"], result)
        for row in seq_rows:
            seq.add_row(row["set"], row["method"], row["condition"], str(row["sequences"]), _pct(row["T1"]),
                        _pct(row["T2+"]), _pct(row["AFS"]), _pct(row["R"]), _unjudged(row))
        tables.append((seq, functools.partial(_stacked_sequences, str(seq.title), seq_rows)))
    tables.extend(_transfer_tables(result, metrics.get("transfer") or [], sets))
    if metrics["significance"]:
        sig = Table(title="Paired tests against statewise (exact McNemar on the same cases, Holm-corrected per "
                          + ("set, " if multi else "") + "condition and family: the ablations apart)")
        lead = (("set",) if multi else ()) + ("condition", "method")
        _columns(sig, (*lead, "pairs", "ΔOC pp", "statewise only", "method only", "p", "p (Holm)"), len(lead))
        sig_rows = _ordered(metrics["significance"], result)
        for row in sig_rows:
            sig.add_row(*([row["set"]] if multi else []), row["condition"], row["method"], *_paired(row))
        tables.append((sig, functools.partial(_stacked_paired, str(sig.title), sig_rows, multi)))
    return tables


def _latency(row: dict[str, Any], hooked: bool) -> tuple[str, ...]:
    if not hooked:
        return ()
    if row.get("hook_ms") is None:
        return ("–",)
    return (f"{row['hook_ms']:.0f} / {row['hook_ms_p95']:.0f}",)


def _paired(row: dict[str, Any]) -> list[str]:
    delta = "–" if row["delta_OC"] is None else f"{100 * row['delta_OC']:+.1f}"
    holm = f"[bold]{row['p_holm']:.3g}[/bold]" if row["significant"] else f"{row['p_holm']:.3g}"
    return [str(row["pairs"]), delta, str(row["reference_only"]), str(row["method_only"]), f"{row['p']:.3g}", holm]


def _stacked_main(title: str, rows: list[dict[str, Any]], hooked: bool) -> list[Table]:
    """Table 1 stacked: outcomes, then costs, each method a heading over its conditions."""
    outcomes = _stacked_table(f"{title}: outcomes", "method / condition",
                              ("n", "OC %", "CI", "AC %", "CS %", "UAR %", "AF1"),
                              ("OC", "CI", "AC", "CS", "UAR", "AF1"))
    _grouped(outcomes, rows, lambda r: r["method"], "condition",
             lambda r: (str(r["n"]), _pct(r["OC"]), _ci(r["OC_ci"]), _pct(r["AC"]), _pct(r["CS"]), _pct(r["UAR"]),
                        _num(r["AF1"])))
    costs = _stacked_table(f"{title}: costs", "method / condition",
                           ("MC", "TC", "IC", "VC", *(("hook ms",) if hooked else ()), "unj."),
                           ("per", "MC", "TC", "IC", "VC", *(("hook",) if hooked else ()), "unj"))
    _grouped(costs, rows, lambda r: r["method"], "condition",
             lambda r: (_num(r["MC"], 1), _num(r["TC"], 1), _num(r["IC"]), _num(r["VC"], 1), *_latency(r, hooked),
                        _unjudged(r)))
    return [outcomes, costs]


def _stacked_sequences(title: str, rows: list[dict[str, Any]]) -> list[Table]:
    table = _stacked_table(title, "set · method / condition", ("seq.", "T1 %", "T2+ %", "AFS %", "R %", "unj."),
                           ("unj",))
    _grouped(table, rows, lambda r: f"{r['set']} · {r['method']}", "condition",
             lambda r: (str(r["sequences"]), _pct(r["T1"]), _pct(r["T2+"]), _pct(r["AFS"]), _pct(r["R"]),
                        _unjudged(r)))
    return [table]


def _stacked_paired(title: str, rows: list[dict[str, Any]], multi: bool) -> list[Table]:
    table = _stacked_table(title, ("set · " if multi else "") + "method / condition",
                           ("pairs", "ΔOC pp", "sw only", "m only", "p", "p Holm"), ("sw", "m"))
    _grouped(table, rows, lambda r: (f"{r['set']} · " if multi else "") + r["method"], "condition", _paired)
    return [table]


def _transfer_tables(result: Any, rows: list[dict[str, Any]],
                     sets: Sequence[str]) -> list[tuple[Table, Callable[[], list[Table]]]]:
    """Seen vs unseen per set: OC (95% CI) per method and transfer group under corrupted memory
    (the condition RQ6 is about; another when the run has no corrupted episodes)."""
    tables: list[tuple[Table, Callable[[], list[Table]]]] = []
    for name in sets:
        in_set = [r for r in rows if r["set"] == name]
        if not in_set:
            continue
        conditions = {r["condition"] for r in in_set}
        condition = "corrupted" if "corrupted" in conditions else next(
            c for c in result.conditions if c in conditions)
        in_set = _ordered([r for r in in_set if r["condition"] == condition], result)
        groups = list(dict.fromkeys((r["group"], r["label"]) for r in in_set))
        cases = {g: max(r["cases"] for r in in_set if r["group"] == g) for g, _ in groups}
        source = f"; split from {_shown(result.transfer)}" if getattr(result, "transfer", None) else ""
        table = Table(title=f"Seen vs unseen: set {name}, {condition} memory, OC % (95% CI){source}")
        _columns(table, ("method", *(f"{label}\n{cases[g]} case{'s' if cases[g] != 1 else ''}"
                                     for g, label in groups)), 1)
        cells = {(r["method"], r["group"]): r for r in in_set}
        for method in dict.fromkeys(r["method"] for r in in_set):
            table.add_row(method, *(_cell(cells.get((method, g))) for g, _ in groups))
        unlisted = getattr(result, "transfer_unlisted", None) or []
        if unlisted:
            table.caption = (f"{len(unlisted)} case(s) of set {name} are not in the transfer file and are left out: "
                             + ", ".join(unlisted[:5]) + (" …" if len(unlisted) > 5 else ""))

        tables.append((table, functools.partial(_stacked_transfer, table, in_set, dict(groups), cases)))
    return tables


def _stacked_transfer(table: Table, in_set: list[dict[str, Any]], labels: dict[str, str],
                      cases: dict[str, int]) -> list[Table]:
    narrow = _stacked_table(str(table.title), "method / group", ("cases", "OC %", "CI", "unj."), ("CI", "unj"))
    if table.caption:
        narrow.caption = f"{narrow.caption} {table.caption}"
    _grouped(narrow, [dict(r, shown=labels[r["group"]]) for r in in_set], lambda r: r["method"], "shown",
             lambda r: (str(cases[r["group"]]), _pct(r["OC"]), _ci(r.get("OC_ci")), _unjudged_of(r)))
    return [narrow]


def _shown(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def _unjudged_of(row: dict[str, Any]) -> str:
    return str(row["unjudged"]) if row.get("unjudged") else ""


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    text = _pct(row["OC"], row.get("OC_ci"))
    return text + (f" [yellow]{row['unjudged']} unjudged[/yellow]" if row.get("unjudged") else "")


def print_summary(result: Any, console: Console | None = None) -> None:
    """Print the run's header line, :func:`summary_tables` and the first unjudged episodes."""
    if console is None:
        console = Console()
    if not console.is_terminal and not console.record and console.width < 160:
        # A log or a pipe: do not squeeze the tables to 80 columns.
        console = Console(file=console.file, width=160)
    console.print(f"[bold]StateWise bench[/bold] — planner {result.planner}, sets {', '.join(result.sets)}: "
                  f"{len(result.episodes)} episodes in {result.wall_seconds:.1f}s (jobs={result.jobs}"
                  + (", quick subset" if result.quick else "") + ")", highlight=False)
    for table in summary_tables(result, width=console.width):
        console.print(table)
    unjudged = [e for e in result.episodes if not e.judged]
    for episode in unjudged[:10]:
        console.print(f"[yellow]unjudged[/yellow] {episode.set}/{episode.case} ({episode.condition}, "
                      f"{episode.method}): {episode.unjudged_reason}", highlight=False)
    if len(unjudged) > 10:
        console.print(f"... and {len(unjudged) - 10} more unjudged episodes (see the JSON)")
