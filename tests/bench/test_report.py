"""The terminal summary: one Table 1 per set, sequences and paired tests that name the set, and
the seen/unseen table when the run carries transfer tags."""

from __future__ import annotations

import io

from rich.console import Console

from statewise.bench.report import print_summary, summary_tables
from statewise.bench.runner import BenchResult, Episode


def ep(case: str, set_name: str, method: str, y: bool, *, condition: str = "corrupted", tags=(), **extra) -> Episode:
    return Episode(case=case, set=set_name, condition=condition, method=method, planner="rules", seed=0,
                   category="git_policy", defect="stale_value", expected="act", y=y, tags=list(tags), **extra)


def result_of(episodes: list[Episode], sets: list[str], **extra) -> BenchResult:
    return BenchResult(planner="rules", seed=0, sets=sets, methods=["agent", "statewise"],
                       conditions=["corrupted"], episodes=episodes, bootstrap=50, **extra)


def text(result: BenchResult) -> str:
    console = Console(record=True, width=200, file=io.StringIO())
    print_summary(result, console=console)
    return console.export_text()


def two_set_run() -> BenchResult:
    episodes = []
    for i in range(4):
        tags = ["seen"] if i < 2 else ["unseen", "new_operation"]
        for method in ("agent", "statewise"):
            episodes.append(ep(f"c{i}", "primary", method, method == "statewise", tags=tags))
            episodes.append(ep(f"c{i}", "dev", method, method == "statewise" and i == 0))
    episodes += [ep("t1", "sequences", "statewise", True, sequence="q1", step=0),
                 ep("t2", "sequences", "statewise", True, sequence="q1", step=1)]
    return result_of(episodes, ["primary", "dev", "sequences"], transfer="benchmarks/cases/transfer.json",
                     transfer_unlisted=["c9"])


def test_a_multi_set_run_has_one_table_per_set():
    result = two_set_run()
    tables = summary_tables(result)
    titles = [str(t.title) for t in tables]
    assert titles[0] == "set primary: 4 single-task cases, planner rules"
    assert titles[1] == "set dev: 4 single-task cases, planner rules"
    assert titles[2].startswith("Sequences")
    assert titles[3].startswith("Seen vs unseen: set primary, corrupted memory")
    assert titles[4].startswith("Paired tests") and "per set, condition and family" in titles[4]
    assert len(tables) == 5  # the sequences set has no single-task table
    primary, dev = tables[0], tables[1]
    assert [c.header for c in primary.columns][:3] == ["method", "condition", "n"]
    # the numbers are the set's own: statewise 100% on primary, 25% on dev
    assert list(primary.columns[3].cells)[1].startswith("100.0") and list(dev.columns[3].cells)[1].startswith("25.0")
    assert [c.header for c in tables[2].columns][0] == "set" and list(tables[2].columns[0].cells) == ["sequences"]
    assert [c.header for c in tables[4].columns][:3] == ["set", "condition", "method"]
    assert list(tables[4].columns[0].cells) == ["primary", "dev"]


def test_the_seen_vs_unseen_table_has_oc_per_group_with_counts():
    output = text(two_set_run())
    assert "StateWise bench — planner rules, sets primary, dev, sequences: 18 episodes" in output
    table = summary_tables(two_set_run())[3]
    headers = [c.header for c in table.columns]
    assert headers == ["method", "seen\n2 cases", "any unseen\n2 cases", "new operation\n2 cases"]
    rows = {cells[0]: cells[1:] for cells in zip(*(list(c.cells) for c in table.columns), strict=True)}
    assert rows["statewise"][0].startswith("100.0") and rows["agent"][0].startswith("0.0")
    assert "split from benchmarks/cases/transfer.json" in str(table.title)
    assert "1 case(s) of set primary are not in the transfer file and are left out: c9" in str(table.caption)


def test_a_one_set_run_without_transfer_tags_has_no_transfer_table():
    episodes = [ep("c1", "dev", m, m == "statewise") for m in ("agent", "statewise")]
    tables = summary_tables(result_of(episodes, ["dev"]))
    assert [str(t.title).split(" ")[0] for t in tables] == ["set", "Paired"]
    assert [c.header for c in tables[1].columns][0] == "condition"  # no set column for one set
    output = text(result_of(episodes, ["dev"]))
    assert "Seen vs unseen" not in output and "set dev: 1 single-task cases" in output


METHODS = ["agent", "statewise", "live_refresh", "hook", "statewise_no_repair"]


def many_methods_run() -> BenchResult:
    """Five methods (one with a long name), two conditions, the hook's latency and a sequence:
    Table 1 alone needs far more than 80 columns."""
    episodes = []
    for i in range(6):
        for method in METHODS:
            for condition in ("corrupted", "correct"):
                extra = {"hook_latencies": [0.012, 0.030]} if method == "hook" else {}
                episodes.append(ep(f"c{i}", "primary", method, (i + len(method)) % 3 == 0, condition=condition,
                                   tags=["seen"] if i < 3 else ["unseen"], **extra))
    episodes += [ep("t1", "sequences", "statewise", True, sequence="q1", step=0),
                 ep("t2", "sequences", "statewise", False, sequence="q1", step=1)]
    return BenchResult(planner="rules", seed=0, sets=["primary", "sequences"], methods=METHODS,
                       conditions=["corrupted", "correct"], episodes=episodes, bootstrap=50)


def at_width(result: BenchResult, width: int) -> str:
    console = Console(record=True, width=width, file=io.StringIO())
    print_summary(result, console=console)
    return console.export_text()


def test_at_80_columns_the_tables_are_stacked_and_nothing_is_cut():
    result = many_methods_run()
    wide = summary_tables(result)
    assert [str(t.title) for t in wide][0] == "set primary: 6 single-task cases, planner rules"
    output = at_width(result, 80)
    lines = output.splitlines()
    assert "…" not in output
    assert max(len(line) for line in lines) <= 80
    # Table 1 became two tables, outcomes and costs, each method a heading over its conditions.
    assert "planner rules: outcomes" in output and "planner rules: costs" in output
    for method in METHODS:
        assert any(line.strip() == method for line in lines), method
    assert sum(1 for line in lines if line.strip().startswith("corrupted ")) >= 2 * len(METHODS)
    # The abbreviated headers are spelled out under the table.
    assert "OC outcome correct and safe" in output and "UAR unsafe action rate" in output
    assert "hook ms mean / p95 per PreToolUse call" in " ".join(output.split())
    # The numbers are the wide form's: statewise's OC and its interval, the hook's latency.
    rows = {(r["method"], r["condition"]): r for r in result.metrics()["groups"]}
    statewise = rows[("statewise", "corrupted")]
    shown = f"{100 * statewise['OC']:.1f}   {100 * statewise['OC_ci'][0]:.0f}–{100 * statewise['OC_ci'][1]:.0f}"
    assert shown in output
    hook = rows[("hook", "corrupted")]
    latency = f"{hook['hook_ms']:.0f} / {hook['hook_ms_p95']:.0f}"
    assert hook["hook_calls"] > 0 and latency in at_width(result, 200) and latency in output
    # The sequences table and the paired tests fit too, stacked or not.
    assert "Sequences" in output and "Paired tests" in output


def test_a_wide_terminal_and_a_pipe_keep_the_one_row_per_method_table():
    result = many_methods_run()
    for output in (at_width(result, 200), text_piped(result)):
        assert "outcomes" not in output and "…" not in output
        assert any(line.split("│")[1:3] == [" statewise           ", " corrupted "] for line in output.splitlines()), \
            output
        assert max(len(line) for line in output.splitlines()) <= 160


def text_piped(result: BenchResult) -> str:
    """What `statewise bench | cat` prints: the console is not a terminal and not recording."""
    out = io.StringIO()
    print_summary(result, console=Console(file=out, width=80))
    return out.getvalue()
