"""The benchmark's terminal summary: Table 1 per (method, condition), sequences, paired tests."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["print_summary", "summary_tables"]


def _pct(value: float | None, ci: Any = None) -> str:
    if value is None:
        return "–"
    text = f"{100 * value:.1f}"
    if ci:
        text += f" [dim]({100 * ci[0]:.0f}–{100 * ci[1]:.0f})[/dim]"
    return text


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def summary_tables(result: Any) -> list[Table]:
    """Rich tables for a :class:`statewise.bench.runner.BenchResult`."""
    metrics = result.metrics()
    main = Table(title=f"StateWise bench — planner {result.planner}, sets {', '.join(result.sets)}, "
                       f"{len(result.episodes)} episodes in {result.wall_seconds:.1f}s (jobs={result.jobs})")
    for column in ("method", "condition", "n", "OC % (95% CI)", "AC %", "CS %", "UAR %", "AF1", "MC", "TC",
                   "IC", "VC", "unjudged"):
        main.add_column(column, justify="left" if column in ("method", "condition") else "right")
    for row in metrics["groups"]:
        main.add_row(row["method"], row["condition"], str(row["n"]), _pct(row["OC"], row["OC_ci"]), _pct(row["AC"]),
                     _pct(row["CS"]), _pct(row["UAR"]), _num(row["AF1"]), _num(row["MC"], 1), _num(row["TC"], 1),
                     _num(row["IC"]), _num(row["VC"], 1), str(row["unjudged"]) if row["unjudged"] else "")
    tables = [main]
    if metrics["sequences"]:
        seq = Table(title="Sequences (store carried over, workspace and conversation reset)")
        for column in ("method", "condition", "sequences", "T1 %", "T2+ %", "AFS %", "R %", "unjudged"):
            seq.add_column(column, justify="left" if column in ("method", "condition") else "right")
        for row in metrics["sequences"]:
            seq.add_row(row["method"], row["condition"], str(row["sequences"]), _pct(row["T1"]), _pct(row["T2+"]),
                        _pct(row["AFS"]), _pct(row["R"]), str(row["unjudged"]) if row["unjudged"] else "")
        tables.append(seq)
    if metrics["significance"]:
        sig = Table(title="Paired tests against statewise (exact McNemar, Holm-corrected per condition)")
        for column in ("condition", "method", "pairs", "ΔOC pp", "statewise only", "method only", "p", "p (Holm)"):
            sig.add_column(column, justify="left" if column in ("condition", "method") else "right")
        for row in metrics["significance"]:
            delta = "–" if row["delta_OC"] is None else f"{100 * row['delta_OC']:+.1f}"
            sig.add_row(row["condition"], row["method"], str(row["pairs"]), delta, str(row["reference_only"]),
                        str(row["method_only"]), f"{row['p']:.3g}",
                        f"[bold]{row['p_holm']:.3g}[/bold]" if row["significant"] else f"{row['p_holm']:.3g}")
        tables.append(sig)
    return tables


def print_summary(result: Any, console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # a log or a pipe: do not squeeze the table to 80 columns
    for table in summary_tables(result):
        console.print(table)
    unjudged = [e for e in result.episodes if not e.judged]
    for episode in unjudged[:10]:
        console.print(f"[yellow]unjudged[/yellow] {episode.case} ({episode.condition}, {episode.method}): "
                      f"{episode.unjudged_reason}", highlight=False)
    if len(unjudged) > 10:
        console.print(f"... and {len(unjudged) - 10} more unjudged episodes (see the JSON)")
