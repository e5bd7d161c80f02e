"""The classes the seventh drift set showed (issue 24), each on a real temporary repository, in
this project's own words: the oldest Go a module needs and the JVM bytecode a build targets,
stated as a floor ("Go 1.21+", "JVM 1.8+") and held to go.mod and the Gradle or Maven build
(the bytecode target or the JDK the build runs on).

Every test builds a real git repository with real commits and runs ``check_memory``; nothing is
mocked.
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
