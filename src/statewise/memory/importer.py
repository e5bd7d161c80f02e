"""Import agents' memory files into the store, idempotently, with lineage.

Each typed fact becomes a record of its contract key in the scope its file's location gives;
a line no rule types becomes a ``memory.note[<hash>]`` record holding the text. The record's
provenance names the file, the line, the line's content hash and the file's git blob:
``memory:<path>:<line>#<hash>[;blob=<sha>]`` with actor ``statewise.memory/<agent>``.

Re-importing reconciles the store with the files: an unchanged line changes nothing; an
edited (or moved) line supersedes its record; a removed line retracts it. A line whose
record ``statewise memory check`` (or any repair) already corrected is *known wrong*: it is
not imported again, so a stale line cannot undo a repair. A record another source holds
for the same key and scope (an observation, a developer's ``record add``) is never
overwritten by a file; the fact is reported as a conflict instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from statewise.contract import Contract
from statewise.memory.discovery import MemoryFile, discover_memory_files
from statewise.memory.edits import undo_reverted_edits
from statewise.memory.extract import MemoryFact, MemoryLine, extract_file
from statewise.records import Provenance, Record, RecordDraft, RecordStatus
from statewise.scopes import TaskScope
from statewise.store.base import Store
from statewise.values import ValueType
from statewise.workspace import derive_task_scope, git_output

__all__ = [
    "ACTOR",
    "CHECK_REASON",
    "ImportItem",
    "ImportReport",
    "MemoryReference",
    "desired_facts",
    "import_memory",
    "is_memory_record",
    "known_wrong",
    "parse_reference",
    "read_lines",
]

#: Actor prefix of every record the import writes (``statewise.memory/<agent>``).
ACTOR = "statewise.memory"
#: Reason prefix ``memory check`` gives a record it retracts or supersedes as defective.
CHECK_REASON = "memory check: defective"
_REFERENCE = re.compile(r"^memory:(?P<path>.+):(?P<line>\d+)#(?P<digest>[0-9a-f]{16})(?:;blob=(?P<blob>[0-9a-f]+))?$")


@dataclass(frozen=True, slots=True)
class MemoryReference:
    """Where an imported record came from."""

    path: str
    line: int
    digest: str
    blob: str | None = None

    def __str__(self) -> str:
        blob = f";blob={self.blob}" if self.blob else ""
        return f"memory:{self.path}:{self.line}#{self.digest}{blob}"


def parse_reference(text: str | None) -> MemoryReference | None:
    """The memory reference in a record's provenance, or None if it has none."""
    match = _REFERENCE.match(text or "")
    if not match:
        return None
    return MemoryReference(match["path"], int(match["line"]), match["digest"], match["blob"])


def is_memory_record(record: Record) -> bool:
    """Whether ``record`` was written by the memory import."""
    return record.provenance.actor.startswith(ACTOR + "/") and parse_reference(record.provenance.reference) is not None


@dataclass(frozen=True, slots=True)
class ImportItem:
    """What the import did with one fact (or one removed line)."""

    action: str  # added, superseded, unchanged, retracted, known_wrong, conflict, shadowed
    key: str
    scope: str
    value: object
    file: str
    line: int
    record_id: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class ImportReport:
    """The result of one import: the files read, every line, and what happened per fact."""

    files: tuple[MemoryFile, ...]
    lines: tuple[MemoryLine, ...]
    items: tuple[ImportItem, ...] = field(default_factory=tuple)

    def count(self, action: str) -> int:
        return sum(1 for item in self.items if item.action == action)

    @property
    def summary(self) -> dict[str, int]:
        actions = ("added", "superseded", "unchanged", "retracted", "known_wrong", "conflict", "shadowed")
        typed = sum(len(line.facts) for line in self.lines)
        return {"files": len(self.files), "lines": len(self.lines), "facts": typed,
                "untyped": sum(1 for line in self.lines if not line.facts),
                **{action: self.count(action) for action in actions}}


@dataclass(frozen=True, slots=True)
class _Wanted:
    line: MemoryLine
    fact: MemoryFact

    @property
    def reference(self) -> MemoryReference:
        return MemoryReference(str(self.line.file.path), self.line.number, self.line.digest, self.line.file.blob)


def _note_fact(contract: Contract, line: MemoryLine) -> MemoryFact | None:
    note_key = contract.memory.note_key
    if note_key is None:
        return None
    return MemoryFact(key=f"{note_key}[{line.digest}]", value=line.text.strip(), value_type=ValueType.STRING,
                      scope=line.file.scope, rule="untyped")


def read_lines(files: Sequence[MemoryFile], contract: Contract, task: TaskScope) -> list[MemoryLine]:
    """Every content line of ``files``, in order, with its typed facts."""
    lines: list[MemoryLine] = []
    for file in files:
        lines.extend(extract_file(file, contract, repo=task.repo))
    return lines


def desired_facts(lines: Iterable[MemoryLine],
                  contract: Contract) -> tuple[dict[tuple[str, str], _Wanted], list[_Wanted]]:
    """The fact each (key, scope) should hold, and the facts a later statement shadowed.

    Within one file the first statement of a key wins (a heading's first command is the
    command); across files the later one in load order wins (the agents let more specific
    files override more general ones).
    """
    wanted: dict[tuple[str, str], _Wanted] = {}
    shadowed: list[_Wanted] = []
    for line in lines:
        facts = list(line.facts)
        if not facts:
            note = _note_fact(contract, line)
            facts = [note] if note is not None else []
        for fact in facts:
            entry = _Wanted(line, fact)
            slot = (fact.key, fact.scope)
            previous = wanted.get(slot)
            if previous is not None and previous.line.file.path == line.file.path:
                if fact.rule != "untyped":
                    shadowed.append(entry)
                continue
            if previous is not None and previous.fact.rule != "untyped":
                shadowed.append(previous)
            wanted[slot] = entry
    return wanted, shadowed


def known_wrong(store: Store, key: str, scope: str, digest: str, value: object) -> Record | None:
    """The record that corrected this exact line's claim, if one did (the line is known wrong).

    That is an imported record from a line with this content hash and value that was
    superseded by a record from another source, or retracted by ``memory check``.
    """
    active = store.get_active(key, scope)
    if active is not None and active.value == value:
        return None  # the store agrees with the line now (e.g. the repair was reverted)
    for record in reversed(store.history(key, scope)):
        reference = parse_reference(record.provenance.reference)
        if not is_memory_record(record) or reference is None or reference.digest != digest or record.value != value:
            continue
        if record.status is RecordStatus.RETRACTED and (record.status_reason or "").startswith(CHECK_REASON):
            return record
        if record.status is RecordStatus.SUPERSEDED and record.superseded_by:
            successor = store.get(record.superseded_by)
            if not is_memory_record(successor):
                return successor
    return None


def import_memory(
    workspace: str | Path,
    store: Store,
    contract: Contract,
    *,
    home: str | Path | None = None,
    files: Sequence[MemoryFile] | None = None,
    task: TaskScope | None = None,
    agents: Iterable[str] | None = None,
) -> ImportReport:
    """Import the memory files of ``workspace`` into ``store`` (see the module docstring).

    ``files`` overrides discovery (for tests and ``--file``); ``home`` is where user-level
    and auto-memory files are looked for (default ``$HOME``).
    """
    workspace = Path(workspace).resolve()
    task = task or derive_task_scope(workspace)
    undo_reverted_edits(store)  # a reverted repair takes its file edit with it, before the files are read
    if files is None:
        files = discover_memory_files(workspace, home=home, task=task, agents=agents)
    lines = read_lines(files, contract, task)
    wanted, shadowed = desired_facts(lines, contract)
    items: list[ImportItem] = []
    for entry in shadowed:
        items.append(ImportItem("shadowed", entry.fact.key, entry.fact.scope, entry.fact.value,
                                entry.line.file.relpath, entry.line.number,
                                detail="a later statement of the same key in the same scope takes precedence"))
    for (key, scope), entry in wanted.items():
        items.append(_reconcile(store, entry, key, scope))
    top = git_output(workspace, "rev-parse", "--show-toplevel")
    root = Path(top).resolve() if top else workspace
    items.extend(_retract_removed(store, files, wanted, root, set(agents) if agents is not None else None))
    return ImportReport(files=tuple(files), lines=tuple(lines), items=tuple(items))


def _reconcile(store: Store, entry: _Wanted, key: str, scope: str) -> ImportItem:
    fact, line = entry.fact, entry.line
    reference = entry.reference

    def item(action: str, record_id: str | None, detail: str = "") -> ImportItem:
        return ImportItem(action, key, scope, fact.value, line.file.relpath, line.number, record_id, detail)

    corrected = known_wrong(store, key, scope, line.digest, fact.value)
    if corrected is not None:
        return item("known_wrong", corrected.id, f"corrected to {corrected.value!r}" if corrected.key == key
                    else "retracted by memory check")
    active = store.get_active(key, scope)
    provenance = Provenance(source=line.file.source, authority=line.file.authority,
                            actor=f"{ACTOR}/{line.file.agent}", reference=str(reference))
    if active is not None and not is_memory_record(active):
        if active.value == fact.value:
            return item("unchanged", active.id, f"already recorded by {active.provenance.actor}")
        return item("conflict", active.id,
                    f"{active.provenance.actor} holds {active.value!r}; a memory file does not overwrite it")
    if active is not None and active.value == fact.value and active.provenance.reference == str(reference):
        return item("unchanged", active.id)
    draft = RecordDraft(key=key, value=fact.value, scope=scope, provenance=provenance, value_type=fact.value_type)
    if active is None:
        return item("added", store.put(draft, reason=f"imported from {line.file.relpath}:{line.number}").id)
    old = parse_reference(active.provenance.reference)
    why = "moved" if old is not None and old.digest == line.digest else "edited"
    record = store.put(draft, replace=True, reason=f"memory import: line {why} in {line.file.relpath}:{line.number}")
    return item("superseded", record.id, f"line {why}")


def _retract_removed(store: Store, files: Sequence[MemoryFile], wanted: dict[tuple[str, str], _Wanted],
                     root: Path, agents: set[str] | None) -> list[ImportItem]:
    """Retract imported records whose line is gone: from a file this import read, a file
    under this repository that is no longer loaded, or a file that no longer exists."""
    covered = {str(file.path) for file in files}
    items: list[ImportItem] = []
    for record in list(store.records()):
        if record.status is not RecordStatus.ACTIVE or not is_memory_record(record):
            continue
        if (record.key, record.scope) in wanted:
            continue
        if agents is not None and record.provenance.actor.split("/", 1)[1] not in agents:
            continue
        reference = parse_reference(record.provenance.reference)
        assert reference is not None
        path = Path(reference.path)
        if not (reference.path in covered or reference.path.startswith(str(root) + "/") or not path.exists()):
            continue
        retracted = store.retract(record.id,
                                  reason=f"memory import: line removed from {reference.path}:{reference.line}",
                                  actor=record.provenance.actor)
        items.append(ImportItem("retracted", record.key, record.scope, record.value, reference.path, reference.line,
                                retracted.id, "line removed"))
    return items
