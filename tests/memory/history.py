"""What the drift tests share: a repository's history written commit by commit, and the
checker's verdicts and evidence read back per line and key."""

from __future__ import annotations

from statewise.memory.check import CheckReport
from tests.verifiers.helpers import Repo, git


def write_files(repo: Repo, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(repo: Repo, message: str, files: dict[str, str] | None = None, remove: tuple[str, ...] = ()) -> None:
    write_files(repo, files or {})
    for name in remove:
        git(repo.work, "rm", "-r", "-q", name)
    git(repo.work, "add", "-A")
    git(repo.work, "commit", "-q", "-m", message)


def verdicts_of(report: CheckReport) -> dict[tuple[int, str], str]:
    return {(f.line, f.key): f.status for f in report.findings}


def evidence_of(report: CheckReport, line: int, key: str) -> str:
    return " ".join(e for f in report.findings if (f.line, f.key) == (line, key) for e in f.evidence)
