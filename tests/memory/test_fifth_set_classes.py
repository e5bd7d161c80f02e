"""The classes the fifth drift set showed (issue 24), each on a real temporary repository, in
this project's own words: `bun test` (Bun's own runner, not a script), `make X` in a nested
file (the nearest Makefile that has the target, up to the root), a bare file name with two
dots (`eslint.config.js` renamed `.mjs`), a negation that vetoes only its own part of a
sentence, and `pnpm --filter PKG test` (the script of that workspace package).

Every test builds a real git repository with real commits and runs ``check_memory``; nothing is
mocked.
"""

from __future__ import annotations

import json
from pathlib import Path

from statewise.contract import Contract
from statewise.memory import check_memory
from tests.memory.history import commit, evidence_of, verdicts_of
from tests.verifiers.helpers import make_repo


def test_bun_test_runs_buns_own_test_runner_not_a_test_script(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = "# Worker\n\n## Testing\n\nUse `bun test` to run tests.\nUse `bun run test` for the slow suite.\n"
    commit(repo, "a bun package without a test script", {
        "worker/package.json": json.dumps({"name": "worker", "scripts": {"build": "bun build src/index.ts"}}),
        "worker/bun.lock": "{}\n", "worker/src/index.ts": "export {}\n", "worker/CLAUDE.md": notes})
    report = check_memory(repo.work, contract, home=home)
    verdicts = {(f.line, f.key): f.status for f in report.findings if f.file.path.name == "CLAUDE.md"}
    # `bun test` needs no script (nothing here checks Bun's runner: not a defect); `bun run
    # test` does, and the package has none
    assert verdicts[(5, "project.test_command")] == "unresolved"
    assert verdicts[(6, "project.test_command")] == "defective"
    assert not report.ok


def test_make_in_a_nested_file_reads_the_nearest_makefile_that_has_the_target(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = ("# Daemon\n\nLogs are written when running with `make daemon-dev`.\n"
             "- `make build` compiles the daemon\n- `make nightly` builds the nightly daemon\n"
             "- `make -C daemon daemon-dev` starts it from the root\n")
    commit(repo, "a root Makefile and the daemon's own", {
        "Makefile": "daemon-dev:\n\t$(MAKE) -C daemon run\n", "daemon/Makefile": "build:\n\tgo build\nrun:\n\t./d\n",
        "daemon/main.go": "package main\n", "daemon/CLAUDE.md": notes})
    report = check_memory(repo.work, contract, home=home)
    verdicts = {(f.line, f.key): f.status for f in report.findings if f.file.path.name == "CLAUDE.md"}
    assert verdicts[(3, "project.command[run]")] == "valid"  # the root Makefile has it
    assert verdicts[(4, "project.command[run]")] == "valid"  # the daemon's Makefile has it
    assert verdicts[(5, "project.command[run]")] == "defective"  # no Makefile up to the root has it
    # `make -C daemon` names its Makefile: the root's target does not count
    assert verdicts[(6, "project.command[run]")] == "defective"


def test_a_file_name_with_two_dots_renamed_is_defective_with_its_new_name(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = ("# Agents\n\n- `eslint.config.js`: ESLint configuration.\n- `vitest.config.ts`: Vitest configuration\n"
             "- `tsconfig.base.json`: shared compiler options\n- Test files: `kebab-case.test.ts`\n")
    commit(repo, "lint and test configuration", {
        "eslint.config.js": "export default []\n", "vitest.config.ts": "export default {}\n",
        "tsconfig.base.json": "{}\n", "AGENTS.md": notes})
    commit(repo, "eslint config as an ES module", {"eslint.config.mjs": "export default []\n"},
           remove=("eslint.config.js",))
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "fs.exists[eslint.config.js]")] == "defective"
    assert "eslint.config.mjs" in evidence_of(report, 3, "fs.exists[eslint.config.js]")
    assert verdicts[(4, "fs.exists[vitest.config.ts]")] == "valid"
    assert verdicts[(5, "fs.exists[tsconfig.base.json]")] == "valid"
    assert not any(line == 6 for line, _ in verdicts)  # a naming pattern, not a file
    assert not report.ok


def test_a_negation_vetoes_only_its_own_part_of_the_sentence(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = ("# Agents\n\n- Uses `uv` for dependency management (NOT pip)\n"
             "- Follow ESLint rules (`eslint.config.js`), no unused imports\n"
             "- Do not edit `generated/`, `vendor/` or `out/`\n"
             "- Config files such as `app.config.json`, `site.config.json` live at the root\n"
             "- We migrated from poetry to `uv`\n")
    commit(repo, "a uv project linted with eslint", {
        "pyproject.toml": "[project]\nname = \"ledger\"\n", "uv.lock": "version = 1\n",
        "eslint.config.js": "export default []\n", "AGENTS.md": notes})
    commit(repo, "no Python left; eslint config as an ES module", {"eslint.config.mjs": "export default []\n"},
           remove=("pyproject.toml", "uv.lock", "eslint.config.js"))
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    # the claim beside the rejection is read; the rejected part is not
    assert verdicts[(3, "project.uses_tool[uv]")] == "defective"
    assert verdicts[(4, "fs.exists[eslint.config.js]")] == "defective"
    assert "eslint.config.mjs" in evidence_of(report, 4, "fs.exists[eslint.config.js]")
    # a negation reaches what follows it in its sentence; an example word its whole sentence
    assert not any(line in (5, 6) for line, _ in verdicts)
    assert not any(line == 7 and key.startswith("project.uses_tool[") for line, key in verdicts)


def test_pnpm_filter_runs_the_script_of_that_workspace_package(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    notes = ("# Agents\n\n## Checks\n\n```bash\npnpm -F agents-core test\npnpm -F agents-openai test\n"
             "pnpm --filter ./packages/agents-openai build\npnpm -F agents-missing test\n```\n")
    commit(repo, "a pnpm workspace of two packages", {
        "package.json": json.dumps({"name": "agents", "private": True, "scripts": {"test": "vitest"}}),
        "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
        "packages/agents-core/package.json": json.dumps({"name": "@acme/agents-core", "scripts": {"test": "vitest"}}),
        "packages/agents-openai/package.json": json.dumps({"name": "@acme/agents-openai",
                                                           "scripts": {"build": "tsc"}}),
        "AGENTS.md": notes})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings if f.key == "project.command[run]"}
    assert found[6].status == "valid"
    # the root has a test script; the package the filter names has none
    assert found[7].status == "defective"
    assert "packages/agents-openai" in " ".join(c.workspace for c in found[7].checks)
    assert found[8].status == "valid"
    # a filter that names no package of the workspace runs nothing that can be checked
    assert found[9].status == "unresolved"
