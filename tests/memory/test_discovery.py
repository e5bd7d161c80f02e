"""Which files each agent loads, with their authority, scope and git blob."""

from __future__ import annotations

from pathlib import Path

from statewise.memory import claude_project_folder, discover_memory_files
from statewise.memory.discovery import AUTO_MEMORY_START_LINES
from statewise.records import Authority, SourceKind
from tests.verifiers.helpers import Repo, git


def _write(path: Path, text: str = "Some guidance.\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _by_path(files):
    return {str(f.path): f for f in files}


def test_every_agents_files_are_found_with_authority_and_scope(project: Repo, home: Path, env):
    work = project.work
    _write(work / "CLAUDE.md")
    _write(work / ".claude" / "CLAUDE.md")
    _write(work / ".claude" / "rules" / "style.md")
    _write(work / "GEMINI.md")
    _write(work / ".cursor" / "rules" / "python.mdc", "---\nalwaysApply: true\n---\nUse ruff.\n")
    _write(work / "pkg" / "AGENTS.md")
    _write(work / "pkg" / "deep" / "CLAUDE.md")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "memory files")
    _write(work / ".gitignore", "CLAUDE.local.md\n")
    _write(work / "CLAUDE.local.md", "My sandbox is at http://127.0.0.1:8080.\n")
    _write(project.root / "CLAUDE.md", "Parent guidance.\n")  # a directory above the repository
    _write(home / ".claude" / "CLAUDE.md")
    _write(home / ".claude" / "rules" / "mine.md")
    _write(home / ".codex" / "AGENTS.md")
    _write(home / ".gemini" / "GEMINI.md")
    auto = home / ".claude" / "projects" / claude_project_folder(work.resolve()) / "memory"
    _write(auto / "MEMORY.md", "The build uses make.\n")
    _write(auto / "debugging.md", "Flaky test in tests/x.\n")

    files = discover_memory_files(work, home=home, environ=env)
    found = _by_path(files)
    repo_scope = next(f.scope for f in files if f.path == work / "AGENTS.md")
    assert repo_scope.startswith("repo:") and "origin" in repo_scope

    expected_project = ["CLAUDE.md", ".claude/CLAUDE.md", ".claude/rules/style.md", "GEMINI.md",
                        ".cursor/rules/python.mdc", "AGENTS.md", "CLAUDE.local.md"]
    for rel in expected_project:
        file = found[str(work / rel)]
        assert file.scope == repo_scope, rel
        assert file.authority is Authority.DEVELOPER
    assert found[str(work / ".cursor/rules/python.mdc")].agent == "cursor"
    assert found[str(work / "GEMINI.md")].agent == "gemini"
    assert found[str(work / "AGENTS.md")].agent == "codex"
    # committed files carry their git blob, the git-ignored local file does not
    blob = git(work, "rev-parse", "HEAD:AGENTS.md").stdout.strip()
    assert found[str(work / "AGENTS.md")].blob == blob
    assert found[str(work / "CLAUDE.local.md")].blob is None
    assert found[str(work / "CLAUDE.local.md")].kind == "local"
    # nested files apply to their subtree
    assert found[str(work / "pkg" / "AGENTS.md")].scope == f"workspace:{work / 'pkg'}"
    assert found[str(work / "pkg" / "deep" / "CLAUDE.md")].scope == f"workspace:{work / 'pkg' / 'deep'}"
    # a parent directory's file applies to that directory's tree
    assert found[str(project.root / "CLAUDE.md")].scope == f"workspace:{project.root}"
    # user-level files apply to the user
    for path in (home / ".claude" / "CLAUDE.md", home / ".claude" / "rules" / "mine.md",
                 home / ".codex" / "AGENTS.md", home / ".gemini" / "GEMINI.md"):
        assert found[str(path)].scope.startswith("user:"), path
        assert found[str(path)].kind == "user"
    # the auto memory is the agent's own inference
    memory = found[str(auto / "MEMORY.md")]
    assert memory.authority is Authority.AGENT and memory.source is SourceKind.AGENT_INFERENCE
    assert memory.max_lines == AUTO_MEMORY_START_LINES
    assert found[str(auto / "debugging.md")].max_lines is None
    # load order: user files, then parents, then the repository root, nested, then auto memory
    order = [str(f.path) for f in files]
    assert order.index(str(home / ".claude" / "CLAUDE.md")) < order.index(str(project.root / "CLAUDE.md"))
    assert order.index(str(project.root / "CLAUDE.md")) < order.index(str(work / "AGENTS.md"))
    assert order.index(str(work / "AGENTS.md")) < order.index(str(work / "pkg" / "AGENTS.md"))
    assert order.index(str(work / "pkg" / "AGENTS.md")) < order.index(str(auto / "MEMORY.md"))


def test_codex_reads_the_override_instead_of_agents_md(project: Repo, home: Path, env):
    work = project.work
    _write(work / "svc" / "AGENTS.md", "General.\n")
    _write(work / "svc" / "AGENTS.override.md", "Override.\n")
    _write(home / ".codex" / "AGENTS.override.md", "Temporary global override.\n")
    _write(home / ".codex" / "AGENTS.md", "Global.\n")
    paths = {str(f.path) for f in discover_memory_files(work, home=home, environ=env)}
    assert str(work / "svc" / "AGENTS.override.md") in paths
    assert str(work / "svc" / "AGENTS.md") not in paths
    assert str(home / ".codex" / "AGENTS.override.md") in paths
    assert str(home / ".codex" / "AGENTS.md") not in paths


def test_codex_home_comes_from_the_environment(project: Repo, home: Path, env, tmp_path: Path):
    custom = _write(tmp_path / "codex-home" / "AGENTS.md", "Custom home.\n")
    paths = {str(f.path) for f in discover_memory_files(project.work, home=home,
                                                        environ={**env, "CODEX_HOME": str(custom.parent)})}
    assert str(custom) in paths


def test_empty_files_and_other_agents_are_left_out(project: Repo, home: Path, env):
    work = project.work
    _write(work / "GEMINI.md", "")
    _write(work / "CLAUDE.md", "Use pytest.\n")
    files = discover_memory_files(work, home=home, environ=env, agents=["claude"])
    assert [f.relpath for f in files] == ["CLAUDE.md"]


def test_a_directory_outside_git_is_walked(tmp_path: Path, home: Path, env):
    plain = tmp_path / "plain"
    _write(plain / "AGENTS.md")
    _write(plain / "node_modules" / "dep" / "AGENTS.md")  # never entered
    _write(plain / "lib" / "GEMINI.md")
    files = discover_memory_files(plain, home=home, environ=env)
    assert sorted(f.relpath for f in files) == ["AGENTS.md", "lib/GEMINI.md"]
    assert next(f for f in files if f.relpath == "AGENTS.md").scope == f"workspace:{plain.resolve()}"
