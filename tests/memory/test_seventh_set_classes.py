"""The classes the seventh drift set showed (issue 24), and two of the third and fifth sets, each
on a real temporary repository, in this project's own words: the oldest Go a module needs and
the JVM bytecode a build targets, stated as a floor ("Go 1.21+", "JVM 1.8+") and held to go.mod
and the Gradle or Maven build (the bytecode target or the JDK the build runs on); a Bun version
held to what the project pins; Markdown link targets, followed from the memory file's folder; a
count in words after the folder a list item names; a Go module path held to go.mod's module
line; modules listed under a "Repository Layout" heading; a file whose folder a commit removed;
a file name no commit had that names a nested path, an index module or another module flavour;
a file's length in thousands of lines.
"""

from __future__ import annotations

from pathlib import Path

from statewise.contract import Contract
from statewise.memory import check_memory
from statewise.memory.declared import jvm_version, range_facts
from tests.memory.history import commit, evidence_of, verdicts_of
from tests.verifiers.helpers import Repo, make_repo


def _project(tmp_path: Path, message: str, files: dict[str, str]) -> Repo:
    """A repository whose first commit holds ``files`` (the memory file among them)."""
    repo = make_repo(tmp_path / "project")
    commit(repo, message, files)
    return repo


def test_go_and_jvm_floors_are_read_only_as_floors() -> None:
    assert range_facts("Needs Go 1.21+.") == [("go", "1.21+")]
    assert range_facts("- Platforms: JVM (1.8+), native") == [("jvm", "1.8+")]
    assert range_facts("Java >= 17 is required") == [("jvm", ">= 17")]
    # a bare version is often a feature's ("go 1.22 loop variables"), and "go" a verb
    assert range_facts("uses go 1.22 loop variables; go 5 steps back") == []
    assert jvm_version("1.8") == "8" and jvm_version("1_8") == "8" and jvm_version("21") == "21"


def test_a_go_floor_is_held_to_the_go_line_of_go_mod(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Toolkit\n\nBuilds with Go 1.21+.\n\nThe CLI needs Go 1.22+ too.\n"
    repo = _project(tmp_path, "a Go module", {"go.mod": "module example.org/kit\n\ngo 1.22.4\n", "AGENTS.md": notes})
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.supports_runtime[go]")] == "defective"
    assert "go.mod go: 1.22.4" in evidence_of(report, 3, "project.supports_runtime[go]")
    # read to the claim's precision: 1.22+ is right for a module that needs 1.22.4
    assert verdicts[(5, "project.supports_runtime[go]")] == "valid"


def test_a_jvm_floor_is_held_to_the_target_the_build_sets(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Client library\n\n- Runs on JVM 1.8+ and Android.\n- Builds with JDK 17+.\n- Supports Java 11+.\n"
    build = ("kotlin {\n    jvmToolchain(17)\n    jvm {\n        compilerOptions {\n"
             "            jvmTarget = JvmTarget.JVM_1_8\n        }\n    }\n}\n")
    repo = _project(tmp_path, "a multiplatform library", {"build-logic/src/library.gradle.kts": build,
                                                          "AGENTS.md": notes})
    report = check_memory(repo.work, contract, home=home)
    verdicts = verdicts_of(report)
    assert verdicts[(3, "project.supports_runtime[jvm]")] == "valid"
    # the toolchain is the JDK the build runs on: a floor may speak of it
    assert verdicts[(4, "project.supports_runtime[jvm]")] == "valid"
    # neither the target (8) nor the toolchain (17)
    assert verdicts[(5, "project.supports_runtime[jvm]")] == "defective"
    commit(repo, "target Java 11", {"build-logic/src/library.gradle.kts": build.replace("JVM_1_8", "JVM_11")})
    report = check_memory(repo.work, contract, home=home)
    assert verdicts_of(report)[(3, "project.supports_runtime[jvm]")] == "defective"
    assert "JvmTarget.JVM_11" in evidence_of(report, 3, "project.supports_runtime[jvm]")


def test_a_maven_release_is_a_jvm_target_and_no_build_file_leaves_the_floor_unresolved(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Service\n\nJava 21+ only.\n"
    repo = _project(tmp_path, "a service with no build file", {"AGENTS.md": notes})
    assert verdicts_of(check_memory(repo.work, contract, home=home))[(3, "project.supports_runtime[jvm]")] \
        == "unresolved"
    commit(repo, "a Maven build", {"pom.xml": "<project><properties><maven.compiler.release>21"
                                              "</maven.compiler.release></properties></project>\n"})
    assert verdicts_of(check_memory(repo.work, contract, home=home))[(3, "project.supports_runtime[jvm]")] == "valid"


def test_markdown_link_targets_are_followed_from_the_memory_files_folder(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Guide\n\n- Read [the style notes](guides/style.md#naming) and [FAQ](FAQ.md).\n"
             "- Contributing: [CONTRIBUTING.md](../CONTRIBUTING.md)\n"
             "- Site: [docs](https://example.org/docs.md), [top](#guide), `[not a link](nowhere.md)`\n"
             "- Release steps: [RELEASE.md](RELEASE.md); roadmap: [ROADMAP.md](ROADMAP.md)\n"
             "- Build output: [report](out/report.html)\n- Site pages: [flows](/concepts/flows), [tasks](tasks)\n")
    repo = _project(tmp_path, "a guide and its pages", {
        "guides/style.md": "style\n", "guides/FAQ.md": "faq\n", "CONTRIBUTING.md": "contribute\n",
        "RELEASE.md": "release\n", ".gitignore": "out/\n", "AGENTS.md": notes})
    commit(repo, "the release steps move to the wiki", remove=("RELEASE.md",))
    report = check_memory(repo.work, contract, home=home)
    verdicts = {key: status for (line, key), status in verdicts_of(report).items() if key.startswith("fs.link_target")}
    assert verdicts == {
        "fs.link_target[guides/style.md]": "valid",
        "fs.link_target[FAQ.md]": "defective",  # the page is guides/FAQ.md, not beside the memory file
        "fs.link_target[../CONTRIBUTING.md]": "defective",  # above the root; the root has it
        "fs.link_target[RELEASE.md]": "defective",  # a commit removed it
        "fs.link_target[ROADMAP.md]": "stale?",  # never in the tree: no evidence
        "fs.link_target[out/report.html]": "generated",
    }
    assert "guides/FAQ.md" in evidence_of(report, 3, "fs.link_target[FAQ.md]")
    assert "removed" in evidence_of(report, 6, "fs.link_target[RELEASE.md]")


def test_a_link_in_a_nested_memory_file_starts_from_its_folder(tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = _project(tmp_path, "a package with its own notes", {
        "packages/api/AGENTS.md": "# API\n\nSee [the schema](schema.md) and [the root guide](/GUIDE.md).\n",
        "packages/api/schema.md": "schema\n", "GUIDE.md": "guide\n"})
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(3, "fs.link_target[schema.md]")] == "valid"
    assert verdicts[(3, "fs.link_target[/GUIDE.md]")] == "valid"


def test_a_count_in_words_after_the_folder_a_list_item_names(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Demos\n\n## Layout\n- `demos/`: Two demo apps (standalone builds)\n- `tools/`: Three helper scripts\n"
    repo = _project(tmp_path, "two demos", {"demos/chat/main.kt": "fun main() {}\n",
                                            "demos/weather/main.kt": "fun main() {}\n",
                                            "tools/a.sh": "true\n", "AGENTS.md": notes})
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(4, "fs.entry_count[demos]")] == "valid"
    assert (5, "fs.entry_count[tools]") not in verdicts  # "scripts" is not a noun this rule counts
    commit(repo, "a third and a fourth demo", {"demos/notes/main.kt": "fun main() {}\n",
                                               "demos/server/main.kt": "fun main() {}\n"})
    report = check_memory(repo.work, contract, home=home)
    assert verdicts_of(report)[(4, "fs.entry_count[demos]")] == "defective"  # held when the file was added
    assert "the folder has 4 entries" in evidence_of(report, 4, "fs.entry_count[demos]")


def test_a_go_module_path_is_held_to_the_module_line_of_go_mod(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Kit\n\nKit (`example.org/kit`) is a Go toolkit for agents.\n"
             "Its HTTP helpers come from the Go package `example.org/nethelpers/client`.\n")
    repo = _project(tmp_path, "the kit module", {"go.mod": "module example.org/kit\n\ngo 1.22\n", "AGENTS.md": notes})
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(3, "project.declares_module[example.org/kit]")] == "valid"
    # a package path no go.mod of the tree ever declared is not held against the line
    assert verdicts[(4, "project.declares_module[example.org/nethelpers/client]")] == "unresolved"
    commit(repo, "a major version", {"go.mod": "module example.org/kit/v2\n\ngo 1.22\n"})
    report = check_memory(repo.work, contract, home=home)
    assert verdicts_of(report)[(3, "project.declares_module[example.org/kit]")] == "defective"
    assert "go.mod did" in evidence_of(report, 3, "project.declares_module[example.org/kit]")


def test_modules_listed_under_a_repository_layout_heading(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# SDK\n\n## Repository Layout\n- `sdk-core`: Core types\n- `sdk-testkit`: Shared test helpers\n"
             "- `sdk-extras`: Optional helpers\n- `server`: a word, not held as a folder\n")
    repo = _project(tmp_path, "three modules", {"sdk-core/build.gradle.kts": "\n", "sdk-testkit/build.gradle.kts": "\n",
                                                "AGENTS.md": notes})
    commit(repo, "the test kit moves into sdk-core", remove=("sdk-testkit",))
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(4, "fs.exists[sdk-core/]")] == "valid"
    assert verdicts[(5, "fs.exists[sdk-testkit/]")] == "defective"  # removed since the file was added
    assert verdicts[(6, "fs.exists[sdk-extras/]")] == "stale?"  # no evidence it ever was
    assert not any(line == 7 for line, _ in verdicts)


def test_a_file_in_a_folder_a_commit_removed_is_defective_without_a_new_name(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Examples\n\n## Running\n\n```bash\npython examples/02_tools/hello.py\npython examples/01_basics/missing.py\n```\n"
    repo = _project(tmp_path, "numbered examples", {"examples/01_basics/run.py": "print(1)\n",
                                                    "examples/02_tools/search.py": "print(2)\n", "AGENTS.md": notes})
    commit(repo, "renumber the examples", {"examples/03_tools/search.py": "print(2)\n"},
           remove=("examples/02_tools",))
    report = check_memory(repo.work, contract, home=home)
    findings = {f.line: f for f in report.findings}
    assert findings[6].status == "defective"  # hello.py never existed, but its folder was removed
    assert "its folder examples/02_tools was removed" in " ".join(findings[6].evidence)
    assert findings[6].correct is None and findings[6].fix is None  # no new name for the file itself
    assert findings[7].status == "stale?"  # its folder is still there: no evidence


def test_a_host_path_on_a_line_that_speaks_of_no_go_module_is_not_a_module(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = _project(tmp_path, "a service", {"go.mod": "module example.org/svc\n\ngo 1.22\n",
                                            "AGENTS.md": "# Service\n\nThe API answers at `api.example.org/v1`.\n"})
    assert not any(key.startswith("project.declares_module")
                   for _, key in verdicts_of(check_memory(repo.work, contract, home=home)))


def test_a_file_name_no_commit_had_that_names_a_nested_path_of_the_tree(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Bot\n\n## Flow\n\n1. Loads issues via `issue-loader.ts` and renders them with `render.ts`.\n"
             "2. Schedules work in `jobs.py`; retries in `retry-policy.ts`.\n3. Watches with `watch.ts`.\n")
    repo = _project(tmp_path, "the bot's modules", {
        "src/issue/loader.ts": "export {}\n", "src/render/index.ts": "export {}\n",
        "worker/jobs/__init__.py": "\n", "scripts/watch.mts": "export {}\n", "AGENTS.md": notes})
    report = check_memory(repo.work, contract, home=home)
    by_name = {f.key: f for f in report.findings if f.key.startswith("fs.exists[")}
    assert by_name["fs.exists[issue-loader.ts]"].status == "defective"
    assert "the tree has src/issue/loader.ts" in " ".join(by_name["fs.exists[issue-loader.ts]"].evidence)
    assert by_name["fs.exists[issue-loader.ts]"].fix == ("issue-loader.ts", "issue/loader.ts")
    assert by_name["fs.exists[render.ts]"].status == "defective"  # src/render/index.ts
    assert by_name["fs.exists[jobs.py]"].status == "defective"  # worker/jobs/__init__.py
    assert by_name["fs.exists[watch.ts]"].status == "defective"  # scripts/watch.mts
    assert by_name["fs.exists[retry-policy.ts]"].status == "stale?"  # nothing fits: no evidence


def test_a_bun_version_is_held_to_the_versions_the_project_pins(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = "# Action\n\n- Runtime: Bun 1.1.30\n- Bun 1.1 is what CI runs.\n"
    workflow = "jobs:\n  test:\n    steps:\n      - uses: oven-sh/setup-bun@v2\n        with:\n          bun-version: 1.1.30\n"
    repo = _project(tmp_path, "a Bun action", {".github/workflows/ci.yml": workflow, "AGENTS.md": notes})
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(3, "project.supports_runtime[bun]")] == "valid"
    assert verdicts[(4, "project.supports_runtime[bun]")] == "valid"  # 1.1 is read to its precision
    commit(repo, "CI moves to Bun 1.1.34", {".github/workflows/ci.yml": workflow.replace("1.1.30", "1.1.34")})
    report = check_memory(repo.work, contract, home=home)
    assert verdicts_of(report)[(3, "project.supports_runtime[bun]")] == "defective"
    assert "bun-version: 1.1.34" in evidence_of(report, 3, "project.supports_runtime[bun]")
    commit(repo, "CI takes the latest Bun", {".github/workflows/ci.yml": workflow.replace("1.1.30", "latest")})
    # nothing pinned: nothing to hold the line to
    assert verdicts_of(check_memory(repo.work, contract, home=home))[(3, "project.supports_runtime[bun]")] \
        == "unresolved"


def test_a_files_length_in_thousands_of_lines(tmp_path: Path, home: Path, contract: Contract) -> None:
    notes = ("# Client\n\n- `client.py` — the main `Client` class (~2k lines). Most calls live here.\n"
             "- `models.py` — generated models (3k+ lines)\n- `extra.py` — helpers (~5k lines)\n")
    repo = _project(tmp_path, "a client", {"pkg/client.py": "x = 1\n" * 2700, "pkg/models.py": "y = 2\n" * 3200,
                                           "pkg/extra.py": "z = 3\n" * 40, "AGENTS.md": notes})
    verdicts = verdicts_of(check_memory(repo.work, contract, home=home))
    assert verdicts[(3, "fs.line_count[client.py]")] == "valid"  # 2,700 lines: "~2k" cut to its thousands
    assert verdicts[(4, "fs.line_count[models.py]")] == "valid"
    assert verdicts[(5, "fs.line_count[extra.py]")] == "stale?"  # never near 5k: no evidence
    commit(repo, "the client grows", {"pkg/client.py": "x = 1\n" * 3700})
    report = check_memory(repo.work, contract, home=home)
    assert verdicts_of(report)[(3, "fs.line_count[client.py]")] == "defective"
    assert "pkg/client.py has 3700 lines; when the memory file was added it had 2700" \
        in evidence_of(report, 3, "fs.line_count[client.py]")
