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
from statewise.memory.check import CheckReport
from tests.verifiers.helpers import Repo, git, make_repo


def _write(repo: Repo, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _commit(repo: Repo, message: str, files: dict[str, str] | None = None, remove: tuple[str, ...] = ()) -> None:
    _write(repo, files or {})
    for name in remove:
        git(repo.work, "rm", "-r", "-q", name)
    git(repo.work, "add", "-A")
    git(repo.work, "commit", "-q", "-m", message)


def _verdicts(report: CheckReport) -> dict[tuple[int, str], str]:
    return {(f.line, f.key): f.status for f in report.findings}


def test_a_go_package_removed_before_the_memory_file_was_written_is_defective(
        tmp_path: Path, home: Path, contract: Contract) -> None:
    repo = make_repo(tmp_path / "project")
    _commit(repo, "prompt package", {"go.mod": "module example.com/crush\n",
                                     "internal/llm/prompt/prompt.go": "package prompt\n",
                                     "internal/agent/agent.go": "package agent\n"})
    _commit(repo, "wip: remove old implementation", remove=("internal/llm",))
    _commit(repo, "agent notes", {"AGENTS.md": "# Crush\n\n## Testing\n\n"
                                               "- Run single test: `go test ./internal/llm/prompt -run TestGetContext`\n"
                                               "- Agent code: `go test ./internal/agent`\n"})
    report = check_memory(repo.work, contract, home=home)
    found = {f.line: f for f in report.findings}
    assert found[5].status == "defective"
    assert any("internal/llm/prompt was removed" in e and "wip: remove old implementation" in e
               for e in found[5].evidence)
    assert found[6].status == "valid"
