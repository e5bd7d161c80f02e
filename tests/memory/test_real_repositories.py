"""Memory files as real repositories write them (issue 24): each false-flag class of the
real-repository benchmark as a fixture in the project's own words, with exact verdicts.

Every test builds a real git repository, commits real files and runs ``check_memory`` (and
once the installed CLI) on it; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from statewise.contract import Contract
from statewise.memory import check_memory, propose_edits
from statewise.memory.check import CheckReport
from tests.verifiers.helpers import Repo, git, make_repo


def _repo(tmp_path: Path, files: dict[str, str], memory: str, *, memory_path: str = "AGENTS.md") -> Repo:
    repo = make_repo(tmp_path / "project")
    for name, text in files.items():
        path = repo.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (repo.work / memory_path).parent.mkdir(parents=True, exist_ok=True)
    (repo.work / memory_path).write_text(memory)
    git(repo.work, "add", "-A")
    git(repo.work, "commit", "-q", "-m", "project and its agent notes")
    return repo


def _verdicts(report: CheckReport) -> dict[tuple[str, int, str], str]:
    return {(f.file.relpath, f.line, f.key): f.status for f in report.findings}


def test_names_resolve_against_the_section_folder_and_the_tree_listing(tmp_path: Path, home: Path,
                                                                       contract: Contract) -> None:
    memory = """# Layout

## `packages/core`

- `src/index.ts` is the entry point.
- `src/engine.ts` holds the engine.

```
packages/
  core/
    src/router.ts
```

The router lives in `src/router.ts`.
"""
    repo = _repo(tmp_path, {"packages/core/src/index.ts": "", "packages/core/src/router.ts": ""}, memory)
    found = _verdicts(check_memory(repo.work, contract, home=home))
    assert found[("AGENTS.md", 5, "fs.exists[src/index.ts]")] == "valid"
    assert found[("AGENTS.md", 14, "fs.exists[src/router.ts]")] == "valid"
    # named nowhere in the tree and never removed: nothing shows it was ever right
    assert found[("AGENTS.md", 6, "fs.exists[src/engine.ts]")] == "stale?"


def test_a_nested_file_may_name_paths_from_the_repository_root(tmp_path: Path, home: Path,
                                                               contract: Contract) -> None:
    memory = "# Web\n\nShared types are in `shared/types.ts`; this package's code in `lib/app.ts`.\n"
    repo = _repo(tmp_path, {"shared/types.ts": "", "web/lib/app.ts": ""}, memory, memory_path="web/AGENTS.md")
    report = check_memory(repo.work, contract, home=home)
    found = _verdicts(report)
    assert found[("web/AGENTS.md", 3, "fs.exists[shared/types.ts]")] == "valid"
    assert found[("web/AGENTS.md", 3, "fs.exists[lib/app.ts]")] == "valid"
    assert report.ok


def test_gitignored_build_output_is_generated_never_wrong(tmp_path: Path, home: Path, contract: Contract) -> None:
    memory = "# Build\n\nThe bundle is written to `dist/bundle.js`; coverage to `coverage/index.html`.\n"
    repo = _repo(tmp_path, {".gitignore": "dist/\ncoverage/\n", "src/main.ts": ""}, memory)
    report = check_memory(repo.work, contract, home=home)
    found = _verdicts(report)
    assert found[("AGENTS.md", 3, "fs.exists[dist/bundle.js]")] == "generated"
    assert found[("AGENTS.md", 3, "fs.exists[coverage/index.html]")] == "generated"
    assert report.ok


def test_hosts_branches_scopes_placeholders_and_examples_are_not_paths(tmp_path: Path, home: Path,
                                                                        contract: Contract) -> None:
    memory = """# Notes

- Import it as `github.com/acme/tool/pkg/api`.
- Open pull requests from `feature/my-change` branches.
- The client package is `@acme/client`.
- Name new handlers `handlers/<name>.go` and configs `conf/{env}.yaml`.
- Write a path like `path/to/file.txt` in the docs.
"""
    repo = _repo(tmp_path, {"main.go": ""}, memory)
    report = check_memory(repo.work, contract, home=home)
    assert [f.key for f in report.findings if f.key.startswith("fs.")] == []


def test_negated_and_example_sentences_state_no_path(tmp_path: Path, home: Path, contract: Contract) -> None:
    memory = """# Notes

This repository ships no `vendor/` folder.
Do not create `src/legacy/` again.
Put fixtures in a folder, e.g. `tests/data/`.
Sources are in `src/`.
"""
    repo = _repo(tmp_path, {"src/app.py": ""}, memory)
    report = check_memory(repo.work, contract, home=home)
    assert {(f.line, f.key): f.status for f in report.findings if f.key.startswith("fs.")} == {
        (6, "fs.exists[src/]"): "valid"}


def test_a_removed_path_is_defective_with_the_commit_and_its_new_name(tmp_path: Path, home: Path,
                                                                      contract: Contract) -> None:
    memory = "# Layout\n\nThe CLI entry point is `src/cli.py`.\n"
    repo = _repo(tmp_path, {"src/cli.py": "print('cli')\n" * 20}, memory)
    git(repo.work, "mv", "src/cli.py", "src/command_line.py")
    git(repo.work, "commit", "-q", "-m", "rename the CLI module")
    report = check_memory(repo.work, contract, home=home)
    (finding,) = [f for f in report.findings if f.key == "fs.exists[src/cli.py]"]
    assert finding.status == "defective"
    assert "rename the CLI module" in " ".join(finding.evidence)
    assert finding.fix == ("src/cli.py", "src/command_line.py")
    (edit,) = propose_edits(report)
    assert edit.new == "The CLI entry point is `src/command_line.py`."
    assert not report.ok


def test_just_recipes_with_parameters_and_a_justfile_in_a_parent_folder(tmp_path: Path, home: Path,
                                                                        contract: Contract) -> None:
    justfile = 'set shell := ["bash", "-c"]\nversion := "1:2"\ntest *args="":\n\tcargo test {{args}}\n' \
               'conformance suite="all": test\n\techo {{suite}}\n'
    memory = "# Crate\n\n## Testing\n\n- `just test`\n- `just conformance`\n- `just version`\n"
    repo = _repo(tmp_path, {"justfile": justfile, "crates/core/Cargo.toml": ""}, memory,
                 memory_path="crates/core/AGENTS.md")
    found = _verdicts(check_memory(repo.work, contract, home=home))
    assert found[("crates/core/AGENTS.md", 5, "project.test_command")] == "valid"
    assert found[("crates/core/AGENTS.md", 6, "project.test_command")] == "valid"
    # an assignment is no recipe, and the justfile is there to say so
    assert found[("crates/core/AGENTS.md", 7, "project.test_command")] == "defective"


def test_makefile_catch_all_and_pattern_rules_and_make_dash_c(tmp_path: Path, home: Path,
                                                              contract: Contract) -> None:
    files = {"Makefile": "%:\n\t$(MAKE) -C docs $@\n", "docs/Makefile": "html-%:\n\tsphinx-build $*\nclean:\n\trm -rf _build\n"}
    memory = "# Docs\n\n1. Build the docs: `make -C docs html-en`\n2. Then `make docs-serve`\n3. Or `make -C docs pdf`\n"
    repo = _repo(tmp_path, files, memory)
    found = _verdicts(check_memory(repo.work, contract, home=home))
    assert found[("AGENTS.md", 3, "project.command[run]")] == "valid"
    assert found[("AGENTS.md", 4, "project.command[run]")] == "valid"
    assert found[("AGENTS.md", 5, "project.command[run]")] == "defective"


def test_commands_in_numbered_steps_and_prose_are_typed_and_scoped_to_their_folder(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    files = {"web/package.json": json.dumps({"scripts": {"dev": "vite", "build": "vite build"}})}
    memory = """# Local workflow

1. Install, then run `cd web && npm run dev`.
2. Before pushing, run `cd web && npm run typecheck`.

When the UI changes, `npm run build` in `web/` refreshes the bundle.
"""
    repo = _repo(tmp_path, files, memory)
    found = _verdicts(check_memory(repo.work, contract, home=home))
    assert found[("AGENTS.md", 3, "project.command[run]")] == "valid"
    assert found[("AGENTS.md", 4, "project.command[run]")] == "defective"
    # no package.json at the root: the command runs in the folder the sentence names
    assert found[("AGENTS.md", 6, "project.command[run]")] == "valid"


def test_versions_are_compared_with_the_project_never_the_machine(tmp_path: Path, home: Path,
                                                                  contract: Contract) -> None:
    files = {"pyproject.toml": '[project]\nname = "demo"\nrequires-python = ">=3.10"\n', ".nvmrc": "20\n"}
    memory = """# Versions

The oldest supported version is Python 3.10.
CI also runs Python 3.13.
Python 3.8 is what we target.
Node 20 is required.
Node 18 is required.
"""
    repo = _repo(tmp_path, files, memory)
    report = check_memory(repo.work, contract, home=home)
    found = {(f.line, f.key): f.status for f in report.findings}
    assert found[(3, "runtime.python_version")] == "valid"
    assert found[(4, "runtime.python_version")] == "valid"
    assert found[(5, "runtime.python_version")] == "defective"
    assert found[(6, "runtime.node_version")] == "valid"
    assert found[(7, "runtime.node_version")] == "defective"
    # a version is never repaired from this machine's interpreter
    assert propose_edits(report) == []


def test_no_declared_version_leaves_the_claim_unresolved(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = _repo(tmp_path, {"setup.py": ""}, "# Notes\n\nThis project uses Python 2.7.\n")
    report = check_memory(repo.work, contract, home=home)
    assert [(f.key, f.status) for f in report.findings] == [("runtime.python_version", "unresolved")]
    assert report.ok


def test_a_symlinked_claude_md_is_one_file_for_write_back(tmp_path: Path, home: Path, contract: Contract) -> None:
    memory = "# Layout\n\nThe CLI entry point is `src/cli.py`.\n"
    repo = _repo(tmp_path, {"src/cli.py": "print('cli')\n" * 20}, memory)
    os.symlink("AGENTS.md", repo.work / "CLAUDE.md")
    git(repo.work, "add", "-A")
    git(repo.work, "commit", "-q", "-m", "CLAUDE.md is AGENTS.md")
    git(repo.work, "mv", "src/cli.py", "src/main_cli.py")
    git(repo.work, "commit", "-q", "-m", "rename the CLI module")
    report = check_memory(repo.work, contract, home=home)
    edits = propose_edits(report)
    assert [(e.file.path.resolve().name, e.line, e.new) for e in edits] == [
        ("AGENTS.md", 3, "The CLI entry point is `src/main_cli.py`.")]


def test_a_healthy_repository_passes_memory_check_through_the_installed_cli(tmp_path: Path, home: Path) -> None:
    files = {"package.json": json.dumps({"scripts": {"test": "vitest", "lint": "eslint ."}}),
             ".gitignore": "dist/\n", "src/index.ts": "", "docs/guide.md": ""}
    memory = """# Agent notes

## Commands

- `npm test` runs the tests; `npm run lint` lints.
- Build output goes to `dist/` (see `src/index.ts`).
- Never commit `.env` files; there is no `secrets/` folder.
- The API lives at `api.example.com/v1`; import `@acme/sdk`.
"""
    repo = _repo(tmp_path, files, memory)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
    environ["HOME"] = str(home)
    statewise = Path(sys.executable).with_name("statewise")
    done = subprocess.run([str(statewise), "memory", "check", "--json", "--no-store"], cwd=repo.work, env=environ,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["summary"]["defective"] == 0
    assert {f["status"] for f in data["findings"]} <= {"valid", "generated"}


def test_a_moved_file_named_bare_is_found_in_the_history_by_its_name(tmp_path: Path, home: Path,
                                                                     contract: Contract) -> None:
    memory = "# Validators\n\n- `ajv-provider.ts` is the default validator.\n"
    repo = _repo(tmp_path, {"packages/core/src/validation/ajv-provider.ts": "export {}\n" * 20}, memory)
    (repo.work / "packages/core/src/validators").mkdir()
    git(repo.work, "mv", "packages/core/src/validation/ajv-provider.ts", "packages/core/src/validators/ajvProvider.ts")
    git(repo.work, "commit", "-q", "-m", "validators: camelCase file names")
    (finding,) = check_memory(repo.work, contract, home=home).findings
    assert finding.status == "defective"
    assert "validators: camelCase file names" in " ".join(finding.evidence)


def test_a_vendored_projects_notes_are_not_held_to_this_tree(tmp_path: Path, home: Path, contract: Contract) -> None:
    vendored = "# Upstream\n\n1. Run `make precommit` before you finish.\n2. Read `.github/copilot-instructions.md`.\n"
    repo = _repo(tmp_path, {"Makefile": "build:\n\tgo build ./...\n", "go.mod": "module example.com/app\n"},
                 vendored, memory_path="vendor/go.example.org/lib/AGENTS.md")
    report = check_memory(repo.work, contract, home=home)
    assert report.findings == ()
    assert report.ok


def test_the_human_report_lists_stale_lines_only_when_asked(tmp_path: Path, home: Path, contract: Contract) -> None:
    from statewise.memory import render_human

    repo = _repo(tmp_path, {"src/app.py": ""}, "# Notes\n\nClients call `tools/call` on the server.\n")
    report = check_memory(repo.work, contract, home=home)
    assert [f.status for f in report.findings] == ["stale?"]
    assert "tools/call" not in render_human(report)
    assert "0 defective, 1 stale?" in render_human(report)
    assert "AGENTS.md:3: stale?: fs.exists[tools/call]" in render_human(report, verbose=True)


def test_a_folder_named_without_its_package_folder_is_defective_with_where_it_is(tmp_path: Path, home: Path,
                                                                                 contract: Contract) -> None:
    memory = """# Architecture

| Path | Purpose |
| `src/acme/` | Library source code |

- **Tools** (`src/tools/` + `ToolManager`)
- **Settings** (`src/settings.py`)
- **Handlers** (`src/handlers/`)
"""
    repo = _repo(tmp_path, {"src/acme/tools/base.py": "", "src/acme/settings.py": "",
                            "src/acme/server/handlers/a.py": "", "src/acme/client/handlers/b.py": ""}, memory)
    report = check_memory(repo.work, contract, home=home)
    found = {f.key: f for f in report.findings}
    # the tree has the one src/**/tools folder: the line is wrong, and says where it is
    assert found["fs.exists[src/tools/]"].status == "defective"
    assert found["fs.exists[src/tools/]"].fix == ("src/tools/", "src/acme/tools/")
    assert found["fs.exists[src/settings.py]"].fix == ("src/settings.py", "src/acme/settings.py")
    # two handlers folders fit: nothing says which one the line meant
    assert found["fs.exists[src/handlers/]"].status == "stale?"
    assert [edit.new for edit in propose_edits(report)] == [
        "- **Tools** (`src/acme/tools/` + `ToolManager`)", "- **Settings** (`src/acme/settings.py`)"]


def test_a_glob_holds_while_something_matches_it(tmp_path: Path, home: Path, contract: Contract) -> None:
    memory = """# Layout

- Each package keeps its sources in `packages/*/src/`.
- Experimental APIs live in `packages/*/src/experimental/`.
- Snapshot tests are `tests/**/*.snap`.
- Built bundles land in `dist/*.js`.
"""
    files = {"packages/server/src/experimental/tasks.ts": "export {}\n" * 10, "packages/server/src/index.ts": "",
             "tests/unit/a.test.ts": "", ".gitignore": "dist/\n"}
    repo = _repo(tmp_path, files, memory)
    git(repo.work, "rm", "-q", "-r", "packages/server/src/experimental")
    git(repo.work, "commit", "-q", "-m", "tasks leave experimental")
    report = check_memory(repo.work, contract, home=home)
    found = {f.key: f for f in report.findings}
    assert found["fs.glob_matches[packages/*/src/]"].status == "valid"
    # nothing matches now, and the history shows the match removed: the evidence of a defect
    removed = found["fs.glob_matches[packages/*/src/experimental/]"]
    assert removed.status == "defective" and "tasks leave experimental" in " ".join(removed.evidence)
    # nothing matches, and nothing that matched was removed: only stale?
    assert found["fs.glob_matches[tests/**/*.snap]"].status == "stale?"
    assert found["fs.glob_matches[dist/*.js]"].status == "generated"
    assert propose_edits(report) == []  # a glob is never rewritten
