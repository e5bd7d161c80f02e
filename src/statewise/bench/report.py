"""The benchmark's terminal summary: per case set, Table 1 per (method, condition), then the
sequences, the seen/unseen split (RQ6) and the paired tests. A run over several sets never
pools their numbers in one row."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
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


def _columns(table: Table, names: Sequence[str], left: int) -> None:
    for index, name in enumerate(names):
        table.add_column(name, justify="left" if index < left else "right")


def _rank(values: Sequence[str], value: Any) -> int:
    return values.index(value) if value in values else len(values)


def _ordered(rows: list[dict[str, Any]], result: Any) -> list[dict[str, Any]]:
    """Rows in the run's order of sets, methods and conditions (metrics sort them by name)."""
    return sorted(rows, key=lambda r: (_rank(result.sets, r.get("set")), _rank(result.methods, r["method"]),
                                       _rank(result.conditions, r["condition"])))


def summary_tables(result: Any) -> list[Table]:
    """Rich tables for a :class:`statewise.bench.runner.BenchResult`: one Table 1 per set,
    then sequences, seen/unseen (when the run has transfer tags) and paired tests."""
    metrics = result.metrics()
    sets = list(result.sets)
    multi = len(sets) > 1
    tables = []
    for name in sets:
        rows = _ordered([r for r in metrics["groups"] if r.get("set") == name], result)
        if not rows:
            continue
        cases = len({e.case for e in result.episodes if e.set == name and e.sequence is None})
        main = Table(title=f"set {name}: {cases} single-task cases, planner {result.planner}")
        # The hook method's latency per PreToolUse call (mean / 95th percentile), when it ran.
        hooked = any(row.get("hook_ms") is not None for row in rows)
        _columns(main, ("method", "condition", "n", "OC % (95% CI)", "AC %", "CS %", "UAR %", "AF1", "MC", "TC",
                        "IC", "VC", *(("hook ms",) if hooked else ()), "unjudged"), 2)
        for row in rows:
            latency = (f"{row['hook_ms']:.0f} / {row['hook_ms_p95']:.0f}" if row.get("hook_ms") is not None
                       else "–",) if hooked else ()
            main.add_row(row["method"], row["condition"], str(row["n"]), _pct(row["OC"], row["OC_ci"]),
                         _pct(row["AC"]), _pct(row["CS"]), _pct(row["UAR"]), _num(row["AF1"]), _num(row["MC"], 1),
                         _num(row["TC"], 1), _num(row["IC"]), _num(row["VC"], 1), *latency,
                         str(row["unjudged"]) if row["unjudged"] else "")
        tables.append(main)
    if metrics["sequences"]:
        seq = Table(title="Sequences (store carried over, workspace and conversation reset)")
        _columns(seq, ("set", "method", "condition", "sequences", "T1 %", "T2+ %", "AFS %", "R %", "unjudged"), 3)
        for row in _ordered(metrics["sequences"], result):
            seq.add_row(row["set"], row["method"], row["condition"], str(row["sequences"]), _pct(row["T1"]),
                        _pct(row["T2+"]), _pct(row["AFS"]), _pct(row["R"]),
                        str(row["unjudged"]) if row["unjudged"] else "")
        tables.append(seq)
    tables.extend(_transfer_tables(result, metrics.get("transfer") or [], sets))
    if metrics["significance"]:
        sig = Table(title="Paired tests against statewise (exact McNemar on the same cases, Holm-corrected per "
                          + ("set, " if multi else "") + "condition and family: the ablations apart)")
        lead = (("set",) if multi else ()) + ("condition", "method")
        _columns(sig, (*lead, "pairs", "ΔOC pp", "statewise only", "method only", "p", "p (Holm)"), len(lead))
        for row in _ordered(metrics["significance"], result):
            delta = "–" if row["delta_OC"] is None else f"{100 * row['delta_OC']:+.1f}"
            sig.add_row(*([row["set"]] if multi else []), row["condition"], row["method"], str(row["pairs"]), delta,
                        str(row["reference_only"]), str(row["method_only"]), f"{row['p']:.3g}",
                        f"[bold]{row['p_holm']:.3g}[/bold]" if row["significant"] else f"{row['p_holm']:.3g}")
        tables.append(sig)
    return tables


def _transfer_tables(result: Any, rows: list[dict[str, Any]], sets: Sequence[str]) -> list[Table]:
    """Seen vs unseen per set: OC (95% CI) per method and transfer group under corrupted memory
    (the condition RQ6 is about; another when the run has no corrupted episodes)."""
    tables = []
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
        tables.append(table)
    return tables


def _shown(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


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
    for table in summary_tables(result):
        console.print(table)
    unjudged = [e for e in result.episodes if not e.judged]
    for episode in unjudged[:10]:
        console.print(f"[yellow]unjudged[/yellow] {episode.set}/{episode.case} ({episode.condition}, "
                      f"{episode.method}): {episode.unjudged_reason}", highlight=False)
    if len(unjudged) > 10:
        console.print(f"... and {len(unjudged) - 10} more unjudged episodes (see the JSON)")
