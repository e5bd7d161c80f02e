"""The classes the sixth drift set showed (issue 24), each on a real temporary repository, in
this project's own words: a script after an environment assignment and two commands on one
line, the folders a list names under a heading that names their parent, a supported range
(Ruby's `3.2.0+`, Node's `^18 || >=20`) against the one the project declares, dependencies and
Cargo features the manifests dropped, a count of a folder's entries, a quoted test file or glob
in a command whose folder is a placeholder, and the two false flags: a root-relative `cd` in a
nested file and a file the line says a script generates.

Every test builds a real git repository with real commits and runs ``check_memory``; nothing is
mocked.
"""

from __future__ import annotations

import json
from pathlib import Path

from statewise.contract import Contract
from statewise.memory import check_memory
from tests.memory.history import commit, evidence_of, verdicts_of
from tests.verifiers.helpers import Repo, make_repo


def _package(scripts: dict[str, str], **extra: object) -> str:
    return json.dumps({"name": "runner", "scripts": scripts, **extra})


def _project(tmp_path: Path, message: str, files: dict[str, str]) -> Repo:
    """A repository whose first commit holds ``files`` (the memory file among them)."""
    repo = make_repo(tmp_path / "project")
    commit(repo, message, files)
    return repo


def test_a_script_after_an_environment_assignment_and_a_second_command_on_the_line(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Runner\n\n## Browser\n\n"
             "- **Browser tests**: `CI=true pnpm test:browser:chrome` or `CI=true pnpm test:browser:safari`\n")
    repo = _project(tmp_path, "two browser providers", {
        "package.json": _package({"test:browser:chrome": "vitest", "test:browser:safari": "vitest"}),
        "AGENTS.md": notes})
    commit(repo, "drop the safari provider", {"package.json": _package({"test:browser:chrome": "vitest"})})
    report = check_memory(repo.work, contract, home=home)
    statuses = sorted(f.status for f in report.findings if f.line == 5)
    # each command of the line is a claim: the first holds, the second names a script a commit removed
    assert statuses == ["defective", "valid"]
    assert "declared script test:browser:safari" in evidence_of(report, 5, "project.command[run]")


def test_folders_listed_under_a_heading_that_names_their_parent(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Monorepo\n\n### Core Packages (`packages/`)\n"
             "- `core` - the library\n- `node-runtime` - SSR runtime\n- `widgets` - UI widgets\n")
    repo = _project(tmp_path, "three packages", {"packages/core/index.ts": "export {}\n",
                                     "packages/node-runtime/index.ts": "export {}\n", "AGENTS.md": notes})
    commit(repo, "remove node-runtime", remove=("packages/node-runtime",))
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(4, "fs.exists[core/]")] == "valid"
    assert verdicts[(5, "fs.exists[node-runtime/]")] == "defective"  # removed since the file was added
    assert verdicts[(6, "fs.exists[widgets/]")] == "stale?"  # no evidence it ever was


def test_a_supported_range_is_held_to_the_range_the_project_declares(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# SDK\n\n- Ruby 3.2.0+ required\n- **Node Version**: ^18.0.0 || >=20.0.0\n"
             "- Node.js 22.12+ for the docs site\n")
    repo = _project(tmp_path, "a gem and its docs site", {
        "sdk.gemspec": 'Gem::Specification.new do |spec|\n  spec.required_ruby_version = ">= 3.2.0"\nend\n',
        "package.json": _package({}, engines={"node": "^22.12.0 || >=24.0.0"}), "AGENTS.md": notes})
    commit(repo, "support Ruby 2.7", {
        "sdk.gemspec": 'Gem::Specification.new do |spec|\n  spec.required_ruby_version = ">= 2.7.0"\nend\n'})
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.supports_runtime[ruby]")] == "defective"
    assert "required_ruby_version: >= 2.7.0" in evidence_of(report, 3, "project.supports_runtime[ruby]")
    assert verdicts[(4, "project.supports_runtime[node]")] == "defective"  # engines start at 22.12
    assert verdicts[(5, "project.supports_runtime[node]")] == "valid"


def test_dependencies_and_features_the_manifests_no_longer_declare(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Notes\n\n- Dependencies: `json_rpc_handler` ~> 0.1, `json_schemer` >= 2.4\n\n"
             "### Key Dependencies\n- **Tinypool** - Worker threading\n- **Vite** - Build tool\n"
             "- **Chai** - Assertions\n\n### Feature Flags\n- `json`, `urlencode` - Additional filters\n"
             "- `loader` - Template loading from filesystem\n")
    gemspec = ('Gem::Specification.new do |spec|\n  spec.add_dependency("json_rpc_handler", "~> 0.1")\n'
               '  spec.add_dependency("json_schemer", ">= 2.4")\nend\n')
    cargo = '[package]\nname = "tpl"\n\n[features]\njson = []\nurlencode = []\nloader = []\n'
    repo = _project(tmp_path, "a gem, a package and a crate", {
        "sdk.gemspec": gemspec, "web/package.json": _package({}, devDependencies={"tinypool": "^1", "vite": "^7"}),
        "tpl/Cargo.toml": cargo, "AGENTS.md": notes})
    commit(repo, "internalize the JSON-RPC handler, own worker pool, loading always on", {
        "sdk.gemspec": gemspec.replace('  spec.add_dependency("json_rpc_handler", "~> 0.1")\n', ""),
        "web/package.json": _package({}, devDependencies={"vite": "^7"}),
        "tpl/Cargo.toml": cargo.replace("loader = []\n", "")})
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.declares_dependency[json_rpc_handler]")] == "defective"
    assert "sdk.gemspec did" in evidence_of(report, 3, "project.declares_dependency[json_rpc_handler]")
    assert verdicts[(3, "project.declares_dependency[json_schemer]")] == "valid"
    assert verdicts[(6, "project.declares_dependency[Tinypool]")] == "defective"
    assert verdicts[(7, "project.declares_dependency[Vite]")] == "valid"
    assert verdicts[(8, "project.declares_dependency[Chai]")] == "unresolved"  # never declared: no evidence
    assert verdicts[(11, "project.declares_feature[json]")] == "valid"
    assert verdicts[(11, "project.declares_feature[urlencode]")] == "valid"
    assert verdicts[(12, "project.declares_feature[loader]")] == "defective"


def test_a_count_of_a_folders_entries(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Monorepo\n\n- **Monorepo Structure**: 3+ packages in `packages/` directory\n- 2 crates in `crates/`\n"
    repo = _project(tmp_path, "three packages, three crates", {
        **{f"packages/p{n}/package.json": "{}\n" for n in range(3)},
        **{f"crates/c{n}/Cargo.toml": "[package]\n" for n in range(3)}, "AGENTS.md": notes})
    commit(repo, "one package fewer", remove=("packages/p2",))
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "fs.entry_count[packages]")] == "defective"  # 3 then, 2 now
    assert "it had 3" in evidence_of(report, 3, "fs.entry_count[packages]")
    assert verdicts[(4, "fs.entry_count[crates]")] == "stale?"  # never 2: no evidence the line was right


def test_quoted_test_files_in_a_command_whose_folder_is_a_placeholder(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Tests\n\n"
             '- Example: `pnpm -C <package-directory> run-tests "test/actions.test.js"` - one file\n'
             '- Example: `pnpm -C <package-directory> run-tests "test/{actions,css}.test.js"` - two files\n'
             '- Example: `pnpm -C <package-directory> run-tests "test/units.test.js"` - one file\n')
    repo = _project(tmp_path, "tests in JavaScript", {"packages/web/test/actions.test.js": "test()\n",
                                          "packages/web/test/css.test.js": "test()\n",
                                          "packages/web/test/units.test.js": "test()\n", "AGENTS.md": notes})
    commit(repo, "migrate two tests to TypeScript", {
        "packages/web/test/actions.test.ts": "test()\n", "packages/web/test/css.test.ts": "test()\n"},
        remove=("packages/web/test/actions.test.js", "packages/web/test/css.test.js"))
    report = check_memory(repo.work, contract, home=home)
    statuses = {f.line: f.status for f in report.findings}
    assert statuses[3] == "defective"
    assert "renamed to packages/web/test/actions.test.ts" in " ".join(
        e for f in report.findings if f.line == 3 for e in f.evidence)
    assert statuses[4] == "defective"  # the glob matched files a commit removed
    assert statuses[5] == "valid"


def test_a_root_relative_cd_in_a_nested_file_and_a_file_a_script_generates(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    nested = "# AWS\n\nRegenerate the templates:\n\n```bash\ncd src/aws/infra && just generate-cfn\n```\n"
    notes = "# Docs\n\n- `docs/.vitepress/contributor-names.json` is generated by `pnpm docs:contributors`\n"
    repo = _project(tmp_path, "an integration with its own justfile", {
        "src/aws/infra/justfile": "generate-cfn:\n    echo cfn\n", "src/aws/AGENTS.md": nested,
        "package.json": _package({"docs:contributors": "node scripts/contributors.js"}), "AGENTS.md": notes})
    report = check_memory(repo.work, contract, home=home)
    nested_statuses = {f.status for f in report.findings if f.file.relpath == "src/aws/AGENTS.md" and f.line == 6}
    assert nested_statuses == {"valid"}  # the folder is the root's, where the recipe is
    root = {(f.line, f.key): f.status for f in report.findings if f.file.relpath == "AGENTS.md"}
    assert root[(3, "fs.exists[docs/.vitepress/contributor-names.json]")] == "generated"
    assert report.ok
