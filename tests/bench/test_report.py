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
