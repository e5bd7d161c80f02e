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
    for attribute in re.findall(r'\b(?:src|srcset|href)\s*=\s*"([^"]*)"', page, re.IGNORECASE):
        assert attribute.startswith(("data:", "#")), attribute
    assert not re.search(r'(?:src|srcset|href)\s*=\s*["\']?\s*(?:https?:)?//', page, re.IGNORECASE)
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
    # ... and a phone drawing of each, chosen by the browser below 760 px
    assert len(re.findall(r'<source media="\(max-width: 760px\)" srcset="data:image/png;base64,', page)) == 4
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


# --- on a phone and on a wide screen, in a real browser -------------------------------------

#: Measures the laid-out page in the browser (run through the DevTools protocol; the report
#: itself has no script), then taps the first cell of the per-case matrix.
MEASURE = """(() => {
  const style = (element) => getComputedStyle(element);
  const sizes = (selector) => [...document.querySelectorAll(selector)].map((e) => parseFloat(style(e).fontSize));
  const out = {viewport: window.innerWidth, scrollWidth: document.documentElement.scrollWidth, figures: []};
  for (const img of document.querySelectorAll("section.figure img")) {
    const kind = img.currentSrc === img.getAttribute("src") ? "wide" : "phone";
    const box = img.getBoundingClientRect();
    const scale = box.width / img.naturalWidth;
    const legend = img.dataset[kind + "LegendFont"];
    out.figures.push({kind, left: box.left, right: box.right, natural: img.naturalWidth,
                      minFont: parseFloat(img.dataset[kind + "MinFont"]) * scale,
                      legendFont: legend === undefined ? null : parseFloat(legend) * scale});
  }
  out.fonts = {caption: sizes("p.caption"), legend: sizes("p.legend"), note: sizes("p.note")};
  const summary = document.querySelector("table.matrix td.o summary");
  summary.scrollIntoView({block: "start"});
  summary.click();  // what a tap does
  const tip = summary.parentElement.querySelector(".tip");
  const box = tip.getBoundingClientRect();
  out.tip = {shown: style(tip).display !== "none", left: box.left, right: box.right, top: box.top,
             bottom: box.bottom, font: parseFloat(style(tip).fontSize), text: tip.textContent,
             viewportHeight: window.innerHeight};
  out.scrollWidthAfterTap = document.documentElement.scrollWidth;
  return out;
})()"""


def _chromium() -> str:
    import os
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    message = ("headless Chromium is not installed (apt-get install chromium); the phone and wide-screen "
               "checks of the HTML report need it")
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


class _Browser:
    """Headless Chromium driven over its DevTools pipe (fds 3 and 4): no driver, no library."""

    def __init__(self, chromium: str, profile) -> None:
        import fcntl
        import os
        import subprocess

        self._to_r, self._to_w = os.pipe()
        self._from_r, self._from_w = os.pipe()
        keep_in = fcntl.fcntl(self._to_r, fcntl.F_DUPFD, 10)
        keep_out = fcntl.fcntl(self._from_w, fcntl.F_DUPFD, 10)

        def wire() -> None:  # in the child, before exec: the pipe ends become fds 3 and 4
            os.dup2(keep_in, 3)
            os.dup2(keep_out, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, close_fds=False,
            preexec_fn=wire)  # noqa: PLW1509 - a test process with no threads of its own here
        for fd in (self._to_r, self._from_w, keep_in, keep_out):
            os.close(fd)
        self._buffer = b""
        self._next = 0
        self.session: str | None = None

    def call(self, method: str, params: dict | None = None, *, timeout: float = 60) -> dict:
        import os
        import select
        import time

        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if self.session is not None:
            message["sessionId"] = self.session
        os.write(self._to_w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._next:
                    assert "error" not in reply, (method, reply["error"])
                    return reply["result"]
            left = deadline - time.monotonic()
            assert left > 0, f"Chromium did not answer {method} in {timeout} s"
            ready, _, _ = select.select([self._from_r], [], [], left)
            if ready:
                chunk = os.read(self._from_r, 1 << 20)
                assert chunk, "Chromium closed its DevTools pipe"
                self._buffer += chunk

    def open(self, url: str, width: int, height: int, *, phone: bool) -> None:
        import time

        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        # A phone: the viewport meta tag is honoured and the pointer is a finger.
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": phone})
        self.call("Emulation.setTouchEmulationEnabled", {"enabled": phone, "maxTouchPoints": 5 if phone else 1})
        self.call("Page.navigate", {"url": url})
        deadline = time.monotonic() + 60
        while self.evaluate("document.readyState") != "complete" or not self.evaluate(
                "[...document.images].every((i) => i.complete && i.naturalWidth > 0)"):
            assert time.monotonic() < deadline, "the report did not finish loading"
            time.sleep(0.1)

    def evaluate(self, expression: str):
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in reply, reply["exceptionDetails"]
        return reply["result"].get("value")

    def screenshot(self, path, *, full_page: bool) -> None:
        import base64

        params: dict = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", params)["data"]))

    def close(self) -> None:
        import os
        import subprocess

        try:
            self.session = None
            self.call("Browser.close", timeout=10)
        except AssertionError:
            pass
        finally:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            os.close(self._to_w)
            os.close(self._from_r)


@pytest.mark.parametrize("width", [390, 1400])
def test_the_report_reads_on_a_phone_and_on_a_wide_screen(small_run, tmp_path, width):
    """The report in headless Chromium as a 390 px phone (touch) and a 1400 px
    screen: nothing makes the page scroll sideways, every figure fits the width with its text
    (legend included) at a readable size in CSS pixels, captions too, and a tap on a matrix
    cell shows its details on screen. The screenshots stay in tmp_path for a person to see."""
    from PIL import Image

    phone = width < 760
    report = write_html_report(small_run, tmp_path / "report.html")
    browser = _Browser(_chromium(), tmp_path / "profile")
    try:
        browser.open(report.as_uri(), width, 844 if phone else 900, phone=phone)
        browser.screenshot(tmp_path / f"report-{width}.png", full_page=True)
        out = browser.evaluate(MEASURE)
        browser.screenshot(tmp_path / f"report-{width}-tapped.png", full_page=False)
    finally:
        browser.close()
    assert out["viewport"] == width
    assert out["scrollWidth"] <= width and out["scrollWidthAfterTap"] <= width
    figures = out["figures"]
    assert len(figures) == len(drawn(report.read_text(encoding="utf-8"))) == 4
    for figure in figures:
        assert figure["kind"] == ("phone" if phone else "wide"), figure
        assert figure["left"] >= 0 and figure["right"] <= width, figure
        assert figure["legendFont"] is None or figure["legendFont"] >= 11, figure
        # Ticks, bar values, notes: on a phone as large as a legend must be; on a wide screen a
        # drawing is shown at its own size (at most 12 inches at 110 dpi), its smallest text 7 pt.
        assert figure["minFont"] >= (11 if phone else 10.5), figure
    assert any(figure["legendFont"] for figure in figures)
    fonts = out["fonts"]
    assert min(fonts["caption"]) >= 11 and min(fonts["legend"]) >= 11 and min(fonts["note"]) >= 11, fonts
    tip = out["tip"]
    assert tip["shown"] and " — " in tip["text"] and tip["font"] >= 11, tip
    assert 0 <= tip["left"] < tip["right"] <= width and 0 <= tip["top"] < tip["bottom"] <= tip["viewportHeight"]

    with Image.open(tmp_path / f"report-{width}.png") as image:
        assert image.size[0] == width and image.size[1] > 2000  # the whole page, not a viewport
        # Not a blank page: text and bars in many colours.
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 50
