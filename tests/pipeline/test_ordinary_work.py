"""Quiet on ordinary work, firm on dangerous work: a bounded slice of both corpora
(benchmarks/ordinary/) through the real Claude Code hook in real repositories, and the
regressions behind them (issue 10): ordinary commands denied for "no such key", a uv project
read as pip, and a recursive delete allowed because no protected-paths record existed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.records import Provenance, RecordDraft
from statewise.store import open_store
from statewise.workspace import derive_task_scope

ROOT = Path(__file__).resolve().parents[2]


def _load_benchmark():
    spec = importlib.util.spec_from_file_location("ordinary_work", ROOT / "benchmarks" / "ordinary_work.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ordinary_work", module)
    spec.loader.exec_module(module)
    return module


bench = _load_benchmark()
PROJECTS = bench.load_projects()


def test_the_corpora_meet_their_stated_size_and_cover_the_named_tools():
    ordinary = bench.load_corpus("ordinary")
    dangerous = bench.load_corpus("dangerous")
    assert len(ordinary) >= 300 and len(dangerous) >= 30
    commands = " ".join(e.get("command", "") for e in ordinary)
    for tool in ("pip ", "uv ", "poetry ", "pdm ", "pytest", "tox", "nox", "npm ", "pnpm ", "yarn ", "bun ",
                 "cargo ", "go ", "make", "just", "git status", "git diff", "git log", "git add", "git commit",
                 "git switch -c", "git push -u origin feature/work", "git fetch", "git pull", "git rebase"):
        assert tool in commands, tool
    assert {e["tool"] for e in ordinary if "tool" in e} == {"Write", "Edit"}
    assert {e["project"] for e in ordinary + dangerous} <= set(PROJECTS)
    for raw in ordinary + dangerous:
        bench._entry("corpus", raw, ROOT)  # every field is one the harness knows


@pytest.mark.parametrize("condition", bench.CONDITIONS)
def test_a_slice_of_the_ordinary_corpus_is_never_denied_or_asked(tmp_path, condition):
    outcomes = bench.run_corpus("ordinary", condition, tmp_path, limit=5, projects=PROJECTS)
    assert len(outcomes) >= 50
    stopped = [(o.project, o.label, o.verdict, o.reason) for o in outcomes if o.verdict != "allow"]
    assert stopped == []


@pytest.mark.parametrize("condition", bench.CONDITIONS)
def test_a_slice_of_the_dangerous_corpus_is_always_denied_or_asked(tmp_path, condition):
    outcomes = []
    for project in ("py-uv", "node-npm", "py-pip"):
        outcomes += bench.run_corpus("dangerous", condition, tmp_path / project, project=project, limit=7,
                                     projects=PROJECTS)
    assert len(outcomes) >= 15
    allowed = [(o.project, o.label) for o in outcomes if o.verdict == "allow" and not o.shell_gap]
    assert allowed == []
    for outcome in outcomes:
        assert "no such key" not in outcome.reason
        if outcome.verdict == "ask":  # a question says how to answer it; an approval, what it approves
            assert "statewise record add" in outcome.reason or "the developer's approval" in outcome.reason


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_the_corpora_sent_as_codex_and_gemini_cli(tmp_path, agent):
    # The same entries as the other clients send them (apply_patch, write_file/replace) and as
    # they read the answer (no ask: Codex exit 2, Gemini "decision": "deny").
    ordinary = bench.run_corpus("ordinary", "empty", tmp_path / "o", project="py-uv", projects=PROJECTS, agent=agent)
    assert len(ordinary) >= 20
    assert [(o.label, o.reason) for o in ordinary if o.verdict != "allow"] == []
    assert any(o.label.startswith(("Write", "Edit")) for o in ordinary)
    dangerous = bench.run_corpus("dangerous", "empty", tmp_path / "d", project="py-uv", limit=6, projects=PROJECTS,
                                 agent=agent)
    assert dangerous and all(o.verdict == "deny" for o in dangerous), [(o.label, o.verdict) for o in dangerous]


# --- the regressions, one real repository each -------------------------------------------------


def _repo(tmp_path: Path, name: str, extra: dict[str, str] | None = None) -> bench.Repo:
    return bench.build_repo(tmp_path / name, name, PROJECTS[name], extra)


def _record(repo: bench.Repo, key: str, value: object) -> None:
    store = open_store(repo.store, key_schema=builtin_contract())
    try:
        scope = f"repo:{derive_task_scope(repo.workspace).repo}"
        store.put(RecordDraft(key=key, value=value, scope=scope,
                              provenance=Provenance(source="developer", authority="developer", actor="dev")))
    finally:
        store.close()


def test_test_runs_and_installs_are_not_denied_for_a_key_nobody_recorded(tmp_path):
    python = _repo(tmp_path, "py-pip")
    for command in ("pytest", "python -m pytest", "make test", "pip install requests"):
        verdict, reason, _ = bench.call_hook(python, "Bash", {"command": command})
        assert (command, verdict) == (command, "allow"), reason
    node = _repo(tmp_path, "node-npm")
    verdict, reason, _ = bench.call_hook(node, "Bash", {"command": "npm test"})
    assert verdict == "allow", reason


def test_a_uv_init_project_is_not_taken_for_pip(tmp_path):
    repo = _repo(tmp_path, "py-uv-init")
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "uv add requests"})
    assert verdict == "allow", reason


def test_a_test_command_nothing_declares_is_a_question_naming_the_record_command(tmp_path):
    repo = _repo(tmp_path, "node-pnpm")  # a Node project: nothing declares pytest
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "pytest"})
    assert verdict == "ask"
    assert "project.test_command" in reason and "statewise record add project.test_command" in reason
    assert "no such key" not in reason


def test_absence_of_a_protected_paths_record_is_not_permission_to_delete(tmp_path):
    repo = _repo(tmp_path, "py-uv")
    assert (repo.workspace / "data" / "seed.csv").is_file()
    # No record, no .statewise/protected: a recursive delete of a tracked directory is asked about.
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "rm -rf data/"})
    assert verdict == "ask", reason
    assert "fs.protected_paths" in reason and "statewise record add fs.protected_paths" in reason
    # Build output git ignores, and caches, are ordinary work: not asked about.
    for command in ("rm -rf build/ dist/", "rm -rf .pytest_cache", "rm -rf node_modules"):
        verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": command})
        assert verdict == "allow", (command, reason)
    # Once the developer says data/ is protected, the same delete is denied.
    _record(repo, "fs.protected_paths", ["data", ".env"])
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "rm -rf data/"})
    assert verdict == "deny" and "no_delete_of_protected_path" in reason


def test_the_projects_protected_file_is_an_authority_and_a_protected_path_is_never_a_question(tmp_path):
    repo = _repo(tmp_path, "py-uv", {".statewise/protected": "data\n.env\n"})
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "rm -rf data"})
    assert verdict == "deny" and ".statewise/protected" in reason
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "rm -rf src"})
    assert verdict == "allow", reason  # the project said what is protected, and src is not
    verdict, reason, _ = bench.call_hook(repo, "Write", {"file_path": str(repo.workspace / ".env"), "content": ""})
    assert verdict == "deny"


def test_untracked_data_git_does_not_ignore_is_asked_about_even_when_protection_is_known(tmp_path):
    repo = _repo(tmp_path, "go")
    _record(repo, "fs.protected_paths", [".env"])
    (repo.workspace / "exports").mkdir()
    (repo.workspace / "exports" / "q3.csv").write_text("id\n")
    verdict, reason, _ = bench.call_hook(repo, "Bash", {"command": "rm -rf exports"})
    assert verdict == "ask", reason  # no copy exists anywhere: the developer decides
