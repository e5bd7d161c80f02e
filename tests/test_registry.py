"""One registry for every extension point, each reachable through an entry-point group.

The plugin tests install a real distribution (a ``.dist-info`` with ``entry_points.txt``) on
``PYTHONPATH`` and run a fresh interpreter, so ``importlib.metadata`` discovers it as it
would a package installed with pip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from statewise.bench.checks import CHECK_PLUGINS as BENCH_CHECKS
from statewise.bench.methods import METHOD_PLUGINS as BENCH_METHODS
from statewise.errors import UnknownPluginError
from statewise.registry import EXTENSION_POINTS, Registry, table

REPO = Path(__file__).resolve().parents[1]
CASE = REPO / "benchmarks" / "cases" / "beyond" / "bey-corr-clean-build-09.yaml"

# A check plugin's module imports only statewise.bench.checks: it is loaded while the case
# schema is being built, when statewise.bench.case (and so the method table) is half imported.
PLUGIN = '''
from typing import ClassVar, Literal

from statewise.bench.checks import CheckModel


class MarkerFile(CheckModel):
    summary: ClassVar[str] = "the workspace holds the marker file `name`"
    kind: Literal["marker_file"]
    name: str

    def judge(self, ctx, before):
        present = (ctx.work / self.name).exists()
        return self._result(present, f"{self.name} {'present' if present else 'absent'}")


class NotACheck:
    kind = "not_a_check"

'''

METHOD_PLUGIN = '''
from statewise.bench.methods import AgentMethod


class Echo(AgentMethod):
    name = "echo"
'''


def _install_plugin(root: Path, entry_points: str, source: str = PLUGIN) -> dict[str, str]:
    (root / "sw_plugin").mkdir()
    (root / "sw_plugin" / "__init__.py").write_text("")
    (root / "sw_plugin" / "checks.py").write_text(source)
    (root / "sw_plugin" / "methods.py").write_text(METHOD_PLUGIN)
    info = root / "sw_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sw-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)


def test_every_extension_point_has_a_group_and_a_table_answering_get_and_names() -> None:
    assert sorted(EXTENSION_POINTS) == ["backends", "checks", "methods", "planners", "verifiers"]
    groups = {point.group for point in EXTENSION_POINTS.values()}
    assert len(groups) == len(EXTENSION_POINTS)
    for name, point in EXTENSION_POINTS.items():
        plugins = table(name)
        assert plugins.group == point.group
        names = plugins.names()
        assert names == sorted(names) and names
        assert plugins.get(names[0]) is not None


def test_the_tables_are_the_ones_the_code_uses() -> None:
    from statewise.bench.checks import CHECKS
    from statewise.bench.methods import METHODS
    from statewise.planners import PLANNERS
    from statewise.store import BACKENDS
    from statewise.verifiers import VERIFIERS

    assert table("backends") is BACKENDS and table("planners") is PLANNERS and table("verifiers") is VERIFIERS
    assert table("checks").get("file_absent") is CHECKS["file_absent"]
    assert table("methods").get("agent") is METHODS["agent"]
    assert "no_repair" in table("methods").names()
    assert "bare_approval" in table("methods").names()  # a bundled module's method, found by name


def test_an_unknown_name_is_an_unknown_plugin_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownPluginError, match="unknown extension point 'nope'; known: backends, checks"):
        table("nope")
    with pytest.raises(UnknownPluginError, match="unknown check kind 'nope'; known: command_ran"):
        BENCH_CHECKS.get("nope")
    with pytest.raises(UnknownPluginError, match="unknown bench method 'nope'; known: agent"):
        BENCH_METHODS.get("nope")


def test_a_method_registered_through_the_common_interface_reaches_the_bench() -> None:
    from statewise.bench.methods import METHODS, AgentMethod, get_method

    class Registered(AgentMethod):
        name = "registered_here"

    try:
        assert BENCH_METHODS.register("registered_here")(Registered) is Registered
        assert get_method("registered_here").name == "registered_here"
        with pytest.raises(ValueError, match="already registered"):
            BENCH_METHODS.register("registered_here")(Registered)
    finally:
        METHODS.pop("registered_here", None)


def test_a_registry_register_overrides_and_lists_the_name() -> None:
    plugins: Registry[object] = Registry("widget", "statewise.test_widgets_none")
    marker = object()
    plugins.register("w")(marker)
    assert plugins.get("w") is marker
    assert plugins.names() == ["w"]


def test_a_third_party_check_kind_and_method_load_through_their_entry_point_groups(tmp_path: Path) -> None:
    env = _install_plugin(tmp_path, """
        [statewise.bench_checks]
        marker_file = sw_plugin.checks:MarkerFile
        [statewise.bench_methods]
        echo = sw_plugin.methods:Echo
    """)
    work = tmp_path / "work"
    work.mkdir()
    (work / "MARKER").write_text("")
    done = _run(f"""
        import json, yaml
        from pathlib import Path
        from statewise.bench.case import validate_case_data
        from statewise.bench.checks import JudgeContext
        from statewise.registry import table

        data = yaml.safe_load(Path({str(CASE)!r}).read_text())
        data["goal"] = [{{"kind": "marker_file", "name": "MARKER"}}]
        case = validate_case_data(data, "plugin-case")
        check = case.goal[0]
        result = check.judge(JudgeContext(root=Path({str(tmp_path)!r}), work=Path({str(work)!r}), origin=None), None)
        print(json.dumps({{"type": type(check).__name__, "passed": result.passed, "detail": result.detail,
                           "in_checks": "marker_file" in table("checks").names(),
                           "method": table("methods").get("echo").__name__}}))
    """, env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"type": "MarkerFile", "passed": True, "detail": "MARKER present",
                                       "in_checks": True, "method": "Echo"}


def test_a_check_plugin_whose_kind_is_not_its_name_is_refused_at_load(tmp_path: Path) -> None:
    env = _install_plugin(tmp_path, """
        [statewise.bench_checks]
        other_name = sw_plugin.checks:MarkerFile
    """)
    done = _run("import statewise.bench.checks", env)
    assert done.returncode != 0
    assert "statewise.bench_checks entry point 'other_name': its kind must be Literal['other_name']" in done.stderr


def test_a_check_plugin_that_shadows_a_built_in_kind_is_refused(tmp_path: Path) -> None:
    source = PLUGIN.replace('Literal["marker_file"]', 'Literal["file_exists"]')
    env = _install_plugin(tmp_path, """
        [statewise.bench_checks]
        file_exists = sw_plugin.checks:MarkerFile
    """, source)
    done = _run("import statewise.bench.checks", env)
    assert done.returncode != 0
    assert "'file_exists': a check kind of that name exists" in done.stderr


def test_a_check_plugin_that_is_not_a_check_model_is_refused(tmp_path: Path) -> None:
    env = _install_plugin(tmp_path, """
        [statewise.bench_checks]
        not_a_check = sw_plugin.checks:NotACheck
    """)
    done = _run("import statewise.bench.checks", env)
    assert done.returncode != 0
    assert "'not_a_check': not a CheckModel subclass with a kind" in done.stderr


VERIFIER_PLUGIN = '''
class Answer:
    name = "acme.answer"


class Impostor:
    name = "git.current_branch"
'''


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_third_party_verifier_loads_and_a_built_in_name_stays_built_in(tmp_path: Path, where: str) -> None:
    # The plugin's metadata is found before StateWise's own (PYTHONPATH) or after it (appended
    # to sys.path); either way its `git.current_branch` must not replace the built-in.
    env = _install_plugin(tmp_path, """
        [statewise.verifiers]
        acme.answer = sw_plugin.checks:Answer
        git.current_branch = sw_plugin.checks:Impostor
    """, VERIFIER_PLUGIN)
    if where == "after":
        env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    done = _run(f"""
        import json, sys
        if {where == "after"!r}:
            sys.path.append({str(tmp_path)!r})
        from statewise.verifiers import VERIFIERS

        print(json.dumps({{"plugin": VERIFIERS.get("acme.answer").__name__,
                           "built_in": VERIFIERS.get("git.current_branch").__module__,
                           "listed": "acme.answer" in VERIFIERS.names()}}))
    """, env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"plugin": "Answer", "built_in": "statewise.verifiers.git", "listed": True}


def test_without_statewise_metadata_a_built_in_name_is_found_by_the_full_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    import statewise.registry as registry

    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(registry, "_OWN", [None])  # no entry_points.txt read directly either
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    plugins: Registry[object] = Registry("verifier", "statewise.verifiers")
    from statewise.verifiers.git import CurrentBranch

    assert plugins.get("git.current_branch") is CurrentBranch
    with pytest.raises(UnknownPluginError, match="unknown verifier 'acme.nothing'"):
        plugins.get("acme.nothing")


def test_statewise_own_entry_points_read_directly_are_what_importlib_metadata_reads() -> None:
    # The registry reads StateWise's own entry_points.txt without importlib.metadata (its import
    # is several times the interpreter's start-up); the two readings must agree, group by group.
    from importlib.metadata import distribution

    from statewise.registry import read_own_entry_points

    own = read_own_entry_points()
    assert own is not None, "the installed statewise metadata was not found in its plain form"
    expected: dict[str, dict[str, str]] = {}
    for entry_point in distribution("statewise").entry_points:
        expected.setdefault(entry_point.group, {})[entry_point.name] = entry_point.value
    assert {group: {name: ep.value for name, ep in points.items()} for group, points in own.items()} == expected
    [sqlite] = distribution("statewise").entry_points.select(group="statewise.backends", name="sqlite")
    assert own["statewise.backends"]["sqlite"].load() is sqlite.load()


def test_an_entry_point_file_in_another_form_is_left_to_importlib_metadata(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from statewise.registry import read_own_entry_points

    info = tmp_path / "statewise-9.dist-info"
    info.mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    (info / "entry_points.txt").write_text("[statewise.backends]\nsqlite = statewise.store.sqlite:SQLiteStore\n")
    read = read_own_entry_points()
    assert read is not None and read["statewise.backends"]["sqlite"].value == "statewise.store.sqlite:SQLiteStore"
    for odd in ("sqlite = statewise.store.sqlite:SQLiteStore [extra]\n", "sqlite = statewise.store.sqlite\n",
                "sqlite\n"):
        (info / "entry_points.txt").write_text("[statewise.backends]\n" + odd)
        assert read_own_entry_points() is None, odd
    (tmp_path / "statewise-8.egg-info").mkdir()  # two candidates: which one wins is importlib's call
    assert read_own_entry_points() is None
