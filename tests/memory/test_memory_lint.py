"""benchmarks/memory_lint.py: labels, copies, scoring, StateWise on the fixtures, the real linters."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("memory_lint", ROOT / "benchmarks" / "memory_lint.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_lint"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


ml = _load()


def test_every_fixture_has_a_license_labels_and_a_live_workspace() -> None:
    repos = ml.fixture_repositories()
    assert len(repos) >= 4
    for repo in repos:
        assert (repo.source / "LICENSE").is_file(), repo.name
        assert repo.labels, repo.name
        assert any(p.name in ("package.json", "Makefile", "justfile", "pyproject.toml") for p in repo.source.iterdir())
        for label in repo.labels:
            stored = repo.source / f"{label.file}{ml.SUFFIX}"
            assert stored.is_file(), (repo.name, label.file)
            assert stored.read_text(encoding="utf-8").splitlines()[label.line - 1].strip() == label.text


def test_a_label_must_name_exactly_one_line(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md.fixture").write_text("- run `npm test`\n- run `npm test` again\n", encoding="utf-8")
    (tmp_path / "labels.yaml").write_text("wrong:\n  - {file: AGENTS.md, contains: 'npm test', kind: x}\n",
                                          encoding="utf-8")
    with pytest.raises(ml.LabelError, match="on 2 lines"):
        ml.load_labels(tmp_path)
    (tmp_path / "labels.yaml").write_text("wrong:\n  - {file: AGENTS.md, contains: 'nowhere', kind: x}\n",
                                          encoding="utf-8")
    with pytest.raises(ml.LabelError, match="on 0 lines"):
        ml.load_labels(tmp_path)
    (tmp_path / "labels.yaml").write_text("wrong:\n  - {file: AGENTS.md, contains: 'again', kind: x}\n",
                                          encoding="utf-8")
    [label], _ = ml.load_labels(tmp_path)
    assert (label.file, label.line) == ("AGENTS.md", 2)


def test_materialize_restores_names_and_leaves_the_labels_out(tmp_path: Path) -> None:
    repo = next(r for r in ml.fixture_repositories() if r.name == "monorepo")
    out = ml.materialize(repo, tmp_path / "copy")
    assert (out / "AGENTS.md").is_file() and (out / "packages" / "api" / "AGENTS.md").is_file()
    assert not list(out.rglob("*.fixture")) and not (out / "labels.yaml").exists()
    assert (repo.source / "AGENTS.md.fixture").is_file()  # the fixture itself is untouched


def test_score_counts_lines_not_findings() -> None:
    labels = (ml.Label("AGENTS.md", 3, "dead npm script", "a"), ml.Label("AGENTS.md", 7, "moved path", "b"))
    run = ml.ToolRun("t", "r", flags=[ml.Flag("AGENTS.md", 3, "r1", ""), ml.Flag("AGENTS.md", 3, "r2", ""),
                                      ml.Flag("AGENTS.md", 9, "r3", ""), ml.Flag(None, None, "r4", ""),
                                      ml.Flag("CLAUDE.md", 7, "r5", "")])
    s = ml.score(run, labels)
    assert [label.line for label in s.caught] == [3]
    assert [label.line for label in s.missed] == [7]
    assert (s.other_lines, s.unlocated) == (2, 1)
    assert ml.rules_at(s, "AGENTS.md", 3) == "r1, r2"
    [row] = ml.totals([s], ["t"])
    assert (row["caught"], row["missed"], row["precision"]) == (1, 1, 1 / 3)
    assert row["caught_kinds"] == ["dead npm script"] and row["missed_kinds"] == ["moved path"]


def test_a_tool_that_failed_catches_nothing_and_counts_no_false_positive() -> None:
    labels = (ml.Label("AGENTS.md", 3, "k", "a"),)
    s = ml.score(ml.ToolRun("t", "r", flags=[ml.Flag("AGENTS.md", 3, "x", "")], error="exit 2"), labels)
    assert (s.caught, len(s.missed), s.other_lines) == ((), 1, 0)
    [row] = ml.totals([s], ["t"])
    assert (row["repositories"], row["errors"], row["labelled"]) == (0, 1, 0)


def test_parsers_read_each_tools_report_shape(tmp_path: Path) -> None:
    agentlinter = {"diagnostics": [{"rule": "a/b", "file": "AGENTS.md", "line": 4, "message": "m"},
                                   {"rule": "c/d", "file": "(workspace)", "message": "m"}]}
    assert [(f.file, f.line) for f in ml.parse_agentlinter(agentlinter, tmp_path)] == [("AGENTS.md", 4),
                                                                                        (None, None)]
    claudelint = {"validators": [{"errors": [], "warnings": [{"file": str(tmp_path / "CLAUDE.md"), "line": 8,
                                                              "ruleId": "ref", "message": "m"}]}]}
    assert [(f.file, f.line, f.rule) for f in ml.parse_claudelint(claudelint, tmp_path)] == [("CLAUDE.md", 8, "ref")]
    agentlint = {"findings": [{"rule_id": "OBS-002", "message": "m",
                               "location": {"path": "CLAUDE.md", "start_line": 1}}]}
    assert [(f.file, f.line) for f in ml.parse_agentlint(agentlint, tmp_path)] == [("CLAUDE.md", 1)]


def test_statewise_flags_every_labelled_line_of_the_node_fixture(tmp_path: Path) -> None:
    repo = next(r for r in ml.fixture_repositories() if r.name == "web-app")
    home = tmp_path / "home"
    home.mkdir()
    run = ml.run_statewise(ml.materialize(repo, tmp_path / "repo"), repo.name, home)
    assert run.error is None
    s = ml.score(run, repo.labels)
    assert s.missed == () and len(s.caught) == len(repo.labels)


def test_the_real_linters_run_on_a_fixture(tmp_path: Path) -> None:
    """Installs the pinned linters with npm (into the cache folder) and runs each on one copy."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node/npm not on PATH: the linters are npm packages, so they cannot be installed here")
    try:
        bin_dir = ml.install_linters()
    except ml.InstallProblem as problem:
        pytest.skip(f"the pinned linters could not be installed from the npm registry: {problem}")
    repo = next(r for r in ml.fixture_repositories() if r.name == "py-lib")
    home = tmp_path / "home"
    home.mkdir()
    for tool in ml.tools():
        run = ml.run_tool(tool, bin_dir, ml.materialize(repo, tmp_path / tool.name), repo.name, home)
        assert run.error is None, (tool.name, run.error)
        assert run.flags, tool.name  # each linter reports something on a CLAUDE.md (its rules are structural)
    assert ml.installed_versions(bin_dir.parent.parent) == ml.PINS


def test_the_command_without_npm_prints_the_tables_from_the_runs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "lint.json"
    assert ml.main(["--no-install", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| agents-lint | - |" in printed and "E404" in printed  # absent, and why
    import json

    data = json.loads(out.read_text(encoding="utf-8"))
    [row] = data["totals"]
    labelled = sum(len(r["labels"]) for r in data["repositories"])
    assert row["tool"] == "statewise" and row["labelled"] == labelled
    assert row["caught"] + row["missed"] == labelled
    assert f"| statewise {data['versions']['statewise']} | {row['repositories']} | {labelled} | {row['caught']} |" \
        in printed
    # Every labelled line has a row in the second table.
    assert sum(1 for line in printed.splitlines() if line.startswith("| ") and "`" in line) >= labelled
