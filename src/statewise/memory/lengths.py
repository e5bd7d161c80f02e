"""How long a file is, for memory lines that say it: "`api.py` — the client class (~11k lines)".

A length in thousands of lines ("~11k lines", "11k+ lines") right after a file name in a code
span says the file has that many thousand lines, rounded or cut (at least that many with ``+``).
A length that does not hold is defective only when it held when the memory file was added (the
file's text at that commit is the evidence that the line was right and the file grew or shrank);
otherwise it is ``stale?``. Read-only: git runs through :class:`TreeIndex`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statewise.memory.extract import MemoryFact, MemoryLine
from statewise.memory.paths import TreeIndex
from statewise.values import ValueType

__all__ = ["LENGTH_KEY", "LengthFinding", "judge_length", "length_facts"]

LENGTH_KEY = "fs.line_count["  # fs.line_count[api.py] = "11k"
# a file name in a code span, a short stretch of the same clause (other code spans in it), then
# "(~11k lines)"
_LENGTH = re.compile(r"`(?P<file>[\w./-]+\.[A-Za-z0-9]{1,5})`(?:[^`;.]|`[^`]*`){0,80}?\(?~?\s*(?P<count>\d{1,3})k"
                     r"(?P<more>\+)?\s+lines\b")


@dataclass(frozen=True, slots=True)
class LengthFinding:
    """A length against the tree: where the file is ("" when the tree has none), whether the
    claim holds now, the line counts now and when the memory file was added."""

    where: str
    holds: bool
    now: int
    then: int | None = None
    held: bool = False

    @property
    def detail(self) -> str:
        earlier = f"; when the memory file was added it had {self.then}" if self.then is not None else ""
        return f"{self.where} has {self.now} lines{earlier}"


def length_facts(line: MemoryLine) -> tuple[MemoryFact, ...]:
    """The file lengths ``line`` states, as ``fs.line_count[FILE]`` facts (none in a user's own
    memory file)."""
    if line.file.kind in ("user", "auto", "parent"):
        return ()
    return tuple(MemoryFact(key=f"{LENGTH_KEY}{m.group('file')}]",
                            value=m.group("count") + "k" + (m.group("more") or ""), value_type=ValueType.STRING,
                            scope=line.file.scope, rule="line_count")
                 for m in _LENGTH.finditer(line.text))


def _holds(claimed: str, lines: int) -> bool:
    thousands = int(claimed.rstrip("+").removesuffix("k"))
    # "~11k" is 11,000 rounded or cut to its thousands: 10,500 to 11,999
    return lines >= thousands * 1000 if claimed.endswith("+") else thousands in (round(lines / 1000), lines // 1000)


def _count(text: str | None) -> int | None:
    return None if text is None else len(text.splitlines())


def judge_length(tree: TreeIndex, name: str, folders: list[str], claimed: str, since_file: str) -> LengthFinding:
    """``claimed`` (``11k`` or ``11k+``) lines in the file ``name`` resolves to from ``folders``,
    now and when ``since_file`` (a memory file's path from the root) was added."""
    found = tree.locate(name, folders, anywhere=True)
    now = _count(tree.read(found.where)) if found is not None else None
    if found is None or now is None:
        return LengthFinding("", False, 0)
    if _holds(claimed, now):
        return LengthFinding(found.where, True, now)
    added = tree.added_commit(since_file)
    then = _count(tree.file_at(added, found.where)) if added else None
    return LengthFinding(found.where, False, now, then, then is not None and _holds(claimed, then))
