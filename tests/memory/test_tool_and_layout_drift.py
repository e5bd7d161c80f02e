"""The stale-line classes the fourth drift set missed (issue 24), each on a real temporary
repository, in this project's own words: tools a line says the project uses (and roles, such as
formatting on commit or workspaces), folders moved below a new parent, a name that never
existed beside its plural, `docker compose up` after `cd DIR`, and `make a/b/c` shorthand.

Every test builds a real git repository with real commits and runs ``check_memory``; nothing is
mocked.
"""

from __future__ import annotations

import json
from pathlib import Path

from statewise.contract import Contract
from statewise.memory import check_memory
from tests.memory.history import commit, evidence_of, verdicts_of
from tests.verifiers.helpers import git, make_repo

PYPROJECT_THEN = """[project]
name = "ledger"
dependencies = []

[dependency-groups]
dev = ["pytest>=8", "mypy>=1.10", "mkdocs>=1.6"]

[tool.mypy]
strict = true
"""

PYPROJECT_NOW = """[project]
name = "ledger"
dependencies = []

[dependency-groups]
dev = ["pytest>=8", "pyright>=1.1"]

[tool.pyright]
typeCheckingMode = "strict"
"""

NOTES = """# Ledger

- Type checking: `mypy` in strict mode
- The handbook in `docs/` is a MkDocs site
- Tests run under pytest
- We do not use Tailwind here
- Pages are styled with Tailwind CSS
"""


def test_a_tool_the_tree_no_longer_shows_is_defective_with_what_replaced_it(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    commit(repo, "ledger with mypy and a handbook", {
        "pyproject.toml": PYPROJECT_THEN, "mkdocs.yml": "site_name: Ledger\n", "docs/index.md": "# Ledger\n",
        "tests/conftest.py": "", "CLAUDE.md": NOTES})
    commit(repo, "pyright instead of mypy; the handbook moves to the website repository", {
        "pyproject.toml": PYPROJECT_NOW,
        "Makefile": "docs:\n\t@echo 'the handbook no longer builds here with mkdocs'\n"}, remove=("mkdocs.yml",))
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.uses_tool[mypy]")] == "defective"
    assert "pyright" in evidence_of(report, 3, "project.uses_tool[mypy]")
    # a Makefile line that says the tool is gone is no evidence that it is used
    assert verdicts[(4, "project.uses_tool[mkdocs]")] == "defective"
    assert "mkdocs.yml" in evidence_of(report, 4, "project.uses_tool[mkdocs]")
    assert verdicts[(5, "project.uses_tool[pytest]")] == "valid"
    # a negated line names no tool; a tool the tree never showed is only stale?
    assert not any(line == 6 for line, _ in verdicts)
    assert verdicts[(7, "project.uses_tool[tailwind]")] == "stale?"
    assert not report.ok


def test_formatting_on_commit_and_workspaces_need_a_hook_manager_and_a_workspace_declaration(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    then = {"name": "viewer", "workspaces": ["app", "server"],
            "devDependencies": {"husky": "^9", "lint-staged": "^15", "prettier": "^3"}}
    notes = ("# Viewer\n\n- Prettier formats the code (files are formatted on commit)\n"
             "- A monorepo with npm workspaces: `app/` and `server/`\n")
    commit(repo, "viewer", {"package.json": json.dumps(then), ".husky/pre-commit": "npx lint-staged\n",
                             "app/package.json": "{}", "server/package.json": "{}", "AGENTS.md": notes})
    now = {"name": "viewer", "devDependencies": {"prettier": "^3"}}
    commit(repo, "one package; no git hooks", {"package.json": json.dumps(now)},
            remove=(".husky", "server/package.json"))
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.uses_tool[prettier]")] == "valid"
    assert verdicts[(3, "project.uses_tool[commit-hooks]")] == "defective"
    assert ".husky/pre-commit" in evidence_of(report, 3, "project.uses_tool[commit-hooks]")
    assert verdicts[(4, "project.uses_tool[workspaces]")] == "defective"
    assert verdicts[(4, "fs.exists[app/]")] == "valid"


def test_a_tool_still_in_use_and_a_user_file_are_not_flagged(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = "# Service\n\nTypes: `pyright`.\n- Run `make fmt` before every commit\n- Widgets draw onto `uv.Screen`\n"
    commit(repo, "service", {"pyproject.toml": PYPROJECT_NOW, "AGENTS.md": notes})
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "CLAUDE.md").write_text("# Me\n\nI check types with mypy.\n")
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.uses_tool[pyright]")] == "valid"
    assert not any(key.startswith("project.uses_tool[mypy") for _, key in verdicts)
    # an instruction to the reader is no hook; a code symbol's package is no tool
    assert not any(key.startswith("project.uses_tool[") for line, key in verdicts if line in (4, 5))
    assert report.ok


def test_a_folder_moved_below_a_new_parent_is_defective_a_bare_file_moved_deeper_is_found(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = "# Layout\n\n- `cli/`: the command line\n- `web/`: the browser app\n\n## `web/`\n\n- `router.ts` routes pages\n"
    commit(repo, "layout", {"cli/main.ts": "", "web/router.ts": "", "AGENTS.md": notes})
    git(repo.work, "mv", "cli", "apps")
    (repo.work / "apps" / "cli").mkdir()
    git(repo.work, "mv", "apps/main.ts", "apps/cli/main.ts")
    (repo.work / "web" / "src").mkdir()
    git(repo.work, "mv", "web/router.ts", "web/src/router.ts")
    git(repo.work, "commit", "-q", "-m", "apps/ holds the command line; web code in src/")
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "fs.exists[cli/]")] == "defective"
    assert verdicts[(4, "fs.exists[web/]")] == "valid"
    assert verdicts[(8, "fs.exists[router.ts]")] == "valid"


def test_a_folder_that_never_existed_beside_its_plural_is_defective(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = "# Workflow\n\n```bash\n# lint and format\nuv run ruff check lib/ test/ --fix\nuv run ruff check lib/ fixtures/\n```\n"
    commit(repo, "library", {"lib/core.py": "", "tests/test_core.py": "", "pyproject.toml": "[tool.ruff]\n",
                              "AGENTS.md": notes})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings if f.key == "project.command[run]"}
    assert found[5].status == "defective"
    assert any("tests" in e for e in found[5].evidence)
    assert found[6].status == "stale?"  # no sibling says what fixtures/ meant: no evidence


def test_docker_compose_after_cd_needs_the_compose_file_of_that_folder(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = "# Server\n\n```bash\ncd server/\ndocker compose up\n```\n\n```bash\ncd worker\ndocker-compose up -d\n```\n"
    commit(repo, "services", {"docker-compose.yml": "services: {}\n", "server/docker-compose.yml": "services: {}\n",
                               "server/main.py": "", "worker/compose.yaml": "services: {}\n", "CLAUDE.md": notes})
    git(repo.work, "mv", "server/docker-compose.yml", "server/deploy.yml")
    git(repo.work, "commit", "-q", "-m", "server: compose file renamed")
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings if f.key == "project.command[run]"}
    assert found[5].status == "defective"  # the root's compose file is not the one `cd server/` reads
    assert any("server/docker-compose.yml was removed" in e for e in found[5].evidence)
    assert found[10].status == "valid"


def test_make_a_b_c_names_several_targets(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    makefile = "format:\n\truff format\nlint:\n\truff check\ntypecheck:\n\tpyright\n"
    notes = "# Checks\n\n- Run `make format/lint/typecheck` before pushing\n- Then `make lint/release`\n"
    commit(repo, "make targets", {"Makefile": makefile, "CLAUDE.md": notes})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings if f.key == "project.command[run]"}
    assert found[3].status == "valid"
    assert not any(c.key.startswith("fs.exists[") for c in found[3].checks)
    assert found[4].status == "defective"  # release is no target


def test_a_folder_the_line_says_is_empty_is_not_held_to_the_tree(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    # git keeps no empty folder: no checkout can show one, so the line states nothing checkable
    repo = make_repo(tmp_path / "project")
    notes = "# Layout\n\n- Drafts go in `packages/*/src/drafts/`. Currently empty.\n- Sources: `packages/*/src/`\n"
    commit(repo, "packages", {"packages/core/src/index.ts": "", "CLAUDE.md": notes})
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert not any(line == 3 for line, _ in verdicts)
    assert verdicts[(4, "fs.glob_matches[packages/*/src/]")] == "valid"
    assert report.ok
