"""The stale-line classes the third drift set missed (issue 24), each on a real temporary
repository in the projects' own words: a path removed before the memory file was written, bare
`pnpm <script>` runs, commands after a `cd DIR` line, tree listings and version lists.

Every test builds a real git repository with real commits and runs ``check_memory``; nothing is
mocked.
"""

from __future__ import annotations

import json
from pathlib import Path

from statewise.contract import Contract
from statewise.memory import check_memory
from tests.memory.history import commit
from tests.verifiers.helpers import git, make_repo


def test_a_go_package_removed_before_the_memory_file_was_written_is_defective(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    commit(repo, "prompt package", {"go.mod": "module example.com/crush\n",
                                     "internal/llm/prompt/prompt.go": "package prompt\n",
                                     "internal/agent/agent.go": "package agent\n"})
    commit(repo, "wip: remove old implementation", remove=("internal/llm",))
    commit(repo, "agent notes", {"AGENTS.md": "# Crush\n\n## Testing\n\n"
                                               "- Run single test: `go test ./internal/llm/prompt -run TestGetContext`\n"
                                               "- Agent code: `go test ./internal/agent`\n"})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings}
    assert found[5].status == "defective"
    assert any("internal/llm/prompt was removed" in e and "wip: remove old implementation" in e
               for e in found[5].evidence)
    assert found[6].status == "valid"


def test_bare_pnpm_script_runs_are_checked_against_package_json_with_evidence(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    scripts = {"build": "turbo build", "lint": "eslint .", "prettier-fix": "prettier --write .", "test": "vitest"}
    memory = """# AI SDK

| Command             | Description           |
| ------------------- | --------------------- |
| `pnpm build`        | Build all packages    |
| `pnpm lint`         | Run linting           |
| `pnpm tsc --noEmit` | Type check            |

- **Run**: `pnpm prettier-fix` before committing
"""
    commit(repo, "monorepo and agent notes", {"package.json": json.dumps({"name": "ai", "scripts": scripts}),
                                               "AGENTS.md": memory})
    now = {"build": "turbo build", "check": "oxlint", "fix": "oxfmt", "test": "vitest"}
    commit(repo, "switch to oxlint and oxfmt", {"package.json": json.dumps({"name": "ai", "scripts": now})})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f.status for f in report.findings}
    assert found[5] == "valid"
    assert found[6] == "defective"  # lint was a script when the notes were written; removed since
    assert found[9] == "defective"  # prettier-fix likewise
    assert found[7] == "stale?"  # tsc never was a script: a dependency's binary, nothing says it is gone
    assert not report.ok


def test_commands_after_a_cd_line_in_a_block_run_in_that_folder(tmp_path: Path, home: Path,
                                                                  contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    memory = """# Examples

```bash
cd examples/ai-core
pnpm tsx src/stream-text/openai.ts    # Run a specific example
```

```bash
cd packages/ai
pnpm test:node
node scripts/check.mjs
```
"""
    commit(repo, "examples and agent notes", {
        "examples/ai-core/src/stream-text/openai.ts": "", "examples/ai-core/package.json": "{}",
        "packages/ai/package.json": json.dumps({"scripts": {"test:node": "vitest"}}),
        "packages/ai/scripts/check.mjs": "", "AGENTS.md": memory})
    commit(repo, "fix: build (examples)", remove=("examples/ai-core",))
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f.status for f in report.findings}
    assert found[4] == "defective"  # the folder was removed, by the commit the evidence names
    assert found[5] == "defective"  # the example file with it, looked for under examples/ai-core
    assert found[9] == "valid" and found[10] == "valid" and found[11] == "valid"


def test_tree_listing_entries_are_paths_below_the_listing_root(tmp_path: Path, home: Path,
                                                               contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    memory = """# Claude Code Action

### Project Structure

```
src/
├── check-trigger.ts        # Determines if Claude should respond
├── create-prompt.ts        # Generates contextual prompts
└── types/
    └── github.ts          # TypeScript types for GitHub data
```

```
claude-code-action/
├── action.yml
└── src/
    └── create-prompt.ts
```
"""
    commit(repo, "action and agent notes", {"src/check-trigger.ts": "", "src/create-prompt.ts": "",
                                             "src/types/github.ts": "", "action.yml": "", "CLAUDE.md": memory})
    (repo.work / "src" / "github" / "validation").mkdir(parents=True)
    git(repo.work, "mv", "src/check-trigger.ts", "src/github/validation/check-trigger.ts")
    git(repo.work, "commit", "-q", "-m", "refactor: move validation under github/")
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings}
    assert found[7].status == "defective"  # moved; git's rename detection says where
    assert found[7].fix == ("check-trigger.ts", "github/validation/check-trigger.ts")
    assert found[8].status == "valid" and found[9].status == "valid" and found[10].status == "valid"
    # a listing rooted at the project's own name: its entries are the repository's
    assert found[15].status == "valid" and found[17].status == "valid"


def test_a_version_list_claims_every_version_it_names(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    memory = """# Development Setup

### Requirements

- **Node.js**: v18, v20, or v22 (v22 recommended for development)
- **Node.js**: v22 or v24
- **Python**: 3.10, 3.11 or 3.12
- Python 3.9 and 3.10 are tested in CI
"""
    engines = {"name": "ai", "engines": {"node": "^22 || ^24 || ^26"}}
    commit(repo, "setup", {"package.json": json.dumps(engines),
                            "pyproject.toml": "[project]\nname = 'x'\nrequires-python = '>=3.10'\n",
                            "AGENTS.md": memory})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f.status for f in report.findings}
    assert found[5] == "defective"  # 18 and 20 are outside ^22 || ^24 || ^26
    assert found[6] == "valid"
    assert found[7] == "valid"
    assert found[8] == "defective"  # 3.9 is below >=3.10


def test_a_bare_pnpm_script_of_a_workspace_package_holds(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    memory = """# AI SDK

### Package-Level Commands

Run these inside any package directory:

| `pnpm test:node`   | Run Node.js tests only      |
| `pnpm test:deno`   | Run Deno tests              |
"""
    commit(repo, "workspace", {"package.json": json.dumps({"name": "root", "scripts": {"build": "turbo build"}}),
                                "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - 'examples/*'\n",
                                "packages/ai/package.json": json.dumps({"scripts": {"test:node": "vitest"}}),
                                "AGENTS.md": memory})
    found = {f.line: f.status for f in check_memory(repo.work, contract, home=home).findings}
    assert found[7] == "valid"  # packages/ai declares it
    assert found[8] == "stale?"  # no package declares it, and nothing shows one ever did
