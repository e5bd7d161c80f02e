"""Applied memory-file edits as records, and undoing the edit of a reverted repair.

An edit :mod:`statewise.memory.writeback` writes is recorded as a ``memory.edit[<hash>]``
record naming the repair it carries out. :func:`undo_reverted_edits` puts the old line back
when that repair was reverted, so reverting the repair reverts the edit; every import runs it
before reading the files. This module sits below both the importer and the write-back (it
needs neither the check nor the import), so neither has to import the other.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewise.memory.discovery import MemoryFile
from statewise.records import Authority, LinkKind, RecordStatus, SourceKind
from statewise.store.base import Store

__all__ = ["ACTOR", "EDIT_KEY", "Edit", "EditResult", "undo_reverted_edits", "write_line"]

#: The key under which an applied edit is recorded (qualified by the hash of the new line).
EDIT_KEY = "memory.edit"
ACTOR = "statewise.memory.writeback"


@dataclass(frozen=True, slots=True)
class Edit:
    """A proposed rewrite of one line of one memory file."""

    file: MemoryFile
    line: int
    old: str
    new: str
    key: str
    scope: str
    claimed: Any
    correct: Any

    @property
    def owned_by_agent(self) -> bool:
        """Whether the file is the agent's own memory (the only kind ``auto`` may write)."""
        return self.file.authority is Authority.AGENT

    def diff(self) -> str:
        """The edit as a unified diff of the file (one line of context)."""
        lines = self.file.path.read_text(encoding="utf-8").splitlines(keepends=True)
        after = list(lines)
        if 0 < self.line <= len(after):
            ending = after[self.line - 1][len(after[self.line - 1].rstrip("\r\n")):]
            after[self.line - 1] = self.new + ending
        name = self.file.relpath.lstrip("/")
        return "".join(difflib.unified_diff(lines, after, f"a/{name}", f"b/{name}", n=1))


@dataclass(frozen=True, slots=True)
class EditResult:
    """What happened to one edit: applied, or why not."""

    edit: Edit
    applied: bool
    reason: str
    record_id: str | None = None


def write_line(path: Path, number: int, expected: str, new: str) -> bool:
    """Replace line ``number`` if it still reads ``expected``; atomically; keep line endings."""
    raw = path.read_bytes().decode("utf-8")
    lines = raw.splitlines(keepends=True)
    if not 0 < number <= len(lines) or lines[number - 1].rstrip("\r\n") != expected:
        return False
    ending = lines[number - 1][len(lines[number - 1].rstrip("\r\n")):]
    lines[number - 1] = new + ending
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".statewise")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write("".join(lines))
        os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True


def undo_reverted_edits(store: Store) -> list[EditResult]:
    """Put the old line back for every applied edit whose repair has since been reverted."""
    results: list[EditResult] = []
    for record in list(store.records()):
        if not record.is_active or not record.key.startswith(EDIT_KEY + "["):
            continue
        try:
            payload = json.loads(record.value)
        except ValueError:
            continue
        repair_id = payload.get("repair")
        if not repair_id:
            continue
        repair = store.get(repair_id)
        reverted = repair.status is not RecordStatus.ACTIVE and any(
            link.kind is LinkKind.REVERT and link.from_record == repair_id for link in store.links(repair_id))
        if not reverted:
            continue
        path = Path(payload["path"])
        file = MemoryFile(path=path, agent="", kind="", authority=Authority.DEVELOPER, source=SourceKind.DEVELOPER,
                          scope=record.scope, base=path.parent, relpath=str(path))
        edit = Edit(file=file, line=int(payload["line"]), old=payload["new"], new=payload["old"], key=record.key,
                    scope=record.scope, claimed=None, correct=None)
        written = path.is_file() and write_line(path, edit.line, edit.old, edit.new)
        store.retract(record.id, reason=f"the repair {repair_id} was reverted; the edit was undone"
                      if written else f"the repair {repair_id} was reverted; the line had changed, left as is",
                      actor=ACTOR)
        results.append(EditResult(edit, bool(written), "repair reverted"))
    return results
