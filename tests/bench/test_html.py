"""The offline HTML report: self-contained, one image per drawn figure, notes for skipped ones,
a per-case matrix, and the same bytes for the same input."""

from __future__ import annotations

import base64
import copy
import json
import re

import pytest

from statewise.bench import METHODS, MethodResult, register_method, run_bench
from statewise.bench.html import render_html, write_html_report
from statewise.bench.runner import BenchResult

from .conftest import DEV

TOY = "html_test_refuse"  # a toy baseline: refuses every action (a stand-in for a real baseline)
PICKED = ["git-push-stale-protection", "config-test-command-stale", "seq-test-command"]
PNG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


class Refuse:
    name = TOY

    def run(self, inp):
        return MethodResult(verdict="stop", action=None, reason="refuses every action")


@pytest.fixture(scope="module")
def small_run():
    """A real run: 2 dev cases and 1 four-task sequence, agent, statewise, one ablation and the
    toy baseline, every condition, in this process."""
    register_method(TOY, Refuse, replace=True)
    try:
        result = run_bench(DEV.parent, sets=["dev"], cases=PICKED, methods=["agent", TOY, "statewise", "no_resolution"],
                           jobs=1, progress=False)
    finally:
        METHODS.pop(TOY, None)
    assert result.episodes and all(e.judged for e in result.episodes)
    return result


def sections(page: str) -> dict[int, str]:
    """Figure number -> the HTML of its section."""
    found = re.findall(r'<section class="figure[^"]*" id="figure-(\d+)">(.*?)</section>', page, re.DOTALL)
    return {int(number): body for number, body in found}


def drawn(page: str) -> set[int]:
    return {n for n, body in sections(page).items() if PNG.search(body)}


def assert_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page.lower()
    for attribute in re.findall(r'\b(?:src|href)\s*=\s*"([^"]*)"', page, re.IGNORECASE):
        assert attribute.startswith(("data:", "#")), attribute
    assert not re.search(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//', page, re.IGNORECASE)
    assert "@import" not in page and "url(" not in page


def test_report_from_a_real_run(small_run, tmp_path):
    path = write_html_report(small_run, tmp_path / "out" / "report.html")
    assert path == tmp_path / "out" / "report.html" and path.is_file()
    page = path.read_text(encoding="utf-8")
    assert_self_contained(page)
    # header
    assert "planner</dt><dd>rules</dd>" in page and "case sets</dt><dd>dev</dd>" in page
    assert "2 single-task cases, 1 sequences (4 tasks)" in page
    assert small_run.started.replace("T", " ").replace("+00:00", " UTC") in page
    # the metric table, with intervals and costs per correct outcome
    assert '<table class="metrics">' in page and "outcomes, % (95% CI)" in page
    assert "cost per correct outcome" in page and "AF1" in page and "unjudged" in page
    assert "Refuse" in page  # the toy baseline's label, derived from its name
    # every figure is there, drawn with one image or skipped with a note
    figures = sections(page)
    assert sorted(figures) == [1, 2, 3, 4, 5, 6]
    assert drawn(page) == {1, 2, 4, 5}
    for number in (1, 2, 4, 5):
        assert len(PNG.findall(figures[number])) == 1
        assert "Skipped" not in figures[number]
    assert len(PNG.findall(page)) == 4
    for png in PNG.findall(page):
        assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    assert "Skipped: one planner (rules) and one case set (dev)" in figures[3]
    assert "Skipped: no episode carries a transfer tag" in figures[6]
    # ablation p-values, Table 2
    assert "p (Holm, ablations)" in figures[4] and "w/o Resolution" in figures[4]
    assert "T2–T4" in figures[5] and "AFS %" in figures[5] and "R contexts" in figures[5]
    # the per-case matrix: every case, every (method, condition), failures visible
    matrix = page[page.index('<table class="matrix">'):]
    matrix = matrix[: matrix.index("</table>")]
    for case in ("git-push-stale-protection", "config-test-command-stale", "T4 run-tests-final"):
        assert case in matrix
    cells = re.findall(r'<td class="o (pass|fail|unsafe|unjudged)', matrix)
    assert len(cells) == len(small_run.episodes)
    assert "unsafe" in cells and "pass" in cells  # the unguarded agent pushes over a protected branch
    assert "did not pass</summary>" in page
    # the plain statement
    assert "What this comparison can and cannot show" in page
    assert "It is not an LLM" in page and "simulated developer" in page


def test_report_from_the_json_file_equals_the_report_from_the_result(small_run, tmp_path):
    saved = small_run.write_json(tmp_path / "bench.json")
    from_file = write_html_report(saved, tmp_path / "from-file.html").read_text(encoding="utf-8")
    from_str = render_html(str(saved))
    from_dict = render_html(json.loads(saved.read_text(encoding="utf-8")))
    from_result = render_html(small_run)
    assert from_file == from_str == from_dict == from_result
    assert_self_contained(from_file)
    assert from_file.count('<img src="data:image/png;base64,') == len(drawn(from_file)) == 4


def test_rendering_is_deterministic(small_run, tmp_path):
    data = small_run.to_dict(include_reports=False)
    first = write_html_report(data, tmp_path / "a.html").read_bytes()
    second = write_html_report(copy.deepcopy(data), tmp_path / "b.html").read_bytes()
    assert first == second
    # a reloaded result (metrics recomputed from the episodes) renders the same page too
    assert render_html(BenchResult.from_dict(json.loads(json.dumps(small_run.to_dict(), default=str)))) == \
        first.decode("utf-8")
    for png in PNG.findall(first.decode("utf-8")):
        raw = base64.b64decode(png)
        assert b"tEXt" not in raw and b"iTXt" not in raw and b"tIME" not in raw  # no metadata, no timestamp


def _without(data: dict, *, methods: set[str] = frozenset(), sequences: bool = True) -> dict:
    data = copy.deepcopy(data)
    data["episodes"] = [e for e in data["episodes"] if e["method"] not in methods
                        and (sequences or e["sequence"] is None)]
    data["methods"] = [m for m in data["methods"] if m not in methods]
    data.pop("metrics", None)  # recomputed from the remaining episodes
    return data


def test_figures_are_skipped_with_a_note_when_their_data_is_absent(small_run):
    data = small_run.to_dict(include_reports=False)
    page = render_html(_without(data, methods={TOY, "no_resolution"}, sequences=False))
    assert_self_contained(page)
    figures = sections(page)
    assert drawn(page) == {1}
    assert page.count('<img src="data:image/png;base64,') == 1
    assert "Skipped: no baseline method ran" in figures[2]
    assert "Skipped: the run has no ablation" in figures[4]
    assert "Skipped: the run has no sequence" in figures[5]
    for number in (2, 3, 4, 5, 6):
        assert re.search(r'<p class="note">Skipped: [^<]+</p>', figures[number])
    assert "No baseline ran" in page
    # only the agent under correct memory: nothing to compare, every comparison figure skipped
    data = copy.deepcopy(data)
    data["episodes"] = [e for e in data["episodes"] if e["method"] == "agent" and e["condition"] == "correct"]
    data["methods"], data["conditions"] = ["agent"], ["correct"]
    data.pop("metrics")
    page = render_html(data)
    assert drawn(page) == {1, 5}
    assert "Skipped: the run has no corrupted-memory episodes." in sections(page)[2]
    assert "Skipped: the ablations need the statewise method as reference." in sections(page)[4]


def test_planners_sets_and_transfer_tags_draw_figures_3_and_6(small_run):
    """Episodes of two planners and two sets, and cases tagged unseen, new_repo: the settings
    and transfer figures appear; the command recorded in the JSON is shown."""
    data = _without(small_run.to_dict(include_reports=False), methods=set())
    second = copy.deepcopy(data["episodes"])
    for episode in second:
        episode["planner"] = "noisy:0.2"
    for episode in data["episodes"] + second:
        if episode["case"] == "git-push-stale-protection" and episode["sequence"] is None:
            episode["tags"] = ["unseen", "new_repo"]
        if episode["case"] == "config-test-command-stale" and episode["sequence"] is None:
            episode["set"] = "held-out"
    data["episodes"] += second
    data["sets"] = ["dev", "held-out"]
    data["command"] = ["statewise", "bench", "--sets", "dev,held-out", "--json", "x.json"]
    page = render_html(data)
    assert_self_contained(page)
    assert drawn(page) == {1, 2, 3, 4, 5, 6}
    figures = sections(page)
    assert "OC by planner" not in figures[3]  # the panel titles are inside the PNG, not the HTML
    assert "planner rules only" in figures[3]
    assert "A case is unseen when its tags" in figures[6]
    assert "planners</dt><dd>rules, noisy:0.2</dd>" in page
    assert "<code>statewise bench --sets dev,held-out --json x.json</code>" in page
    assert "<th>planner</th>" in page  # the tables gain a planner column
    assert page.count('<table class="matrix">') == 1 and "noisy:0.2</th>" in page


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a benchmark result"):
        render_html({"format": "something-else/1", "episodes": []})
    with pytest.raises(ValueError, match="not a benchmark result"):
        render_html({"format": "statewise-bench/1"})
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="invalid JSON"):
        render_html(broken)
    with pytest.raises(TypeError):
        render_html(42)  # type: ignore[arg-type]


def _episode(case: str, set_name: str, method: str, y: bool, tags: list[str]) -> dict:
    from statewise.bench.runner import Episode

    return Episode(case=case, set=set_name, condition="corrupted", method=method, planner="rules", seed=0,
                   category="git_policy", defect="stale_value", expected="act", y=y, tags=tags).to_dict()


def test_a_multi_set_run_keeps_the_sets_apart_and_draws_the_transfer_split():
    """Primary cases tagged from transfer.json, dev cases with the same ids: the tables gain a
    set column, the single-set figures show the primary set, Figure 6 uses its split."""
    episodes = []
    for i in range(4):
        tags = ["seen"] if i < 2 else ["unseen", "new_operation"]
        for method in ("agent", "statewise"):
            episodes.append(_episode(f"c{i}", "primary", method, method == "statewise", tags))
            episodes.append(_episode(f"c{i}", "dev", method, method == "statewise" and i == 0, []))
    episodes.append(_episode("c9", "primary", "statewise", True, ["transfer_unlisted"]))
    result = BenchResult(planner="rules", seed=0, sets=["dev", "primary"], methods=["agent", "statewise"],
                         conditions=["corrupted"], episodes=[], bootstrap=100)
    data = {**result.to_dict(), "episodes": episodes}
    data.pop("metrics")
    page = render_html(data)
    assert_self_contained(page)
    figures = sections(page)
    assert drawn(page) == {1, 3, 6}
    assert "Planner rules, set primary." in figures[1]
    assert "Planner rules, set primary, condition corrupted. A case is unseen" in figures[6]
    assert '<th rowspan="2">set</th>' in page and "<th>set</th>" in page  # metrics and paired tests
    metrics = page[page.index('<table class="metrics">'):]
    metrics = metrics[: metrics.index("</table>")]
    assert metrics.count("<tr>") == 2 + 4  # two header rows, (dev, primary) x (agent, statewise)
    # stored metrics from before the per-set rows (no "set" in a group) are recomputed
    old = copy.deepcopy(data)
    from statewise.bench.metrics import aggregate

    old["metrics"] = aggregate(episodes)  # 2000 resamples, like a result without metrics
    for row in old["metrics"]["groups"]:
        row.pop("set")
    assert render_html(old) == page
