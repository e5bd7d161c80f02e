"""How many entries a folder holds, for memory lines that count them.

"15+ packages in `packages/` directory" says the folder holds at least 15 entries (folders or
files); "4 crates in `crates/`" exactly four, as does a list item "`crates/`: four crates".
The count is of the folder's direct entries in the tree. A count that does not hold is
defective only when it held when the memory file was added (the history at that commit is the
evidence that the line was right and the folder changed); otherwise it is ``stale?`` (the line
may count something else, such as only the published packages). Read-only: git runs through
:class:`TreeIndex`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statewise.memory.extract import MemoryFact, MemoryLine
from statewise.memory.paths import TreeIndex
from statewise.values import ValueType

__all__ = ["COUNT_KEY", "CountFinding", "count_facts", "judge_count"]

COUNT_KEY = "fs.entry_count["  # fs.entry_count[packages] = "15+"
# a number (in digits or words), what is counted (a plural noun), and the folder in a code span:
# "15+ packages in `packages/`", or the folder first as a list item gives it, "`samples/`: Three
# sample projects"
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "eleven": 11, "twelve": 12}
_NUMBER = r"(?P<count>\d{1,4}|" + "|".join(_WORDS) + r")(?P<more>\+)?"
_COUNTED = (r"\s+(?:[a-z-]+\s+)?(?:packages|crates|modules|plugins|apps|libraries|services|workspaces|examples|"
            r"projects)")
_FOLDER = r"`(?P<folder>[\w@.-]+(?:/[\w@.-]+)*)/?`"
_COUNT = re.compile(r"(?i)(?<![\w.])" + _NUMBER + _COUNTED + r"\s+(?:in|under|inside)\s+(?:the\s+)?" + _FOLDER)
_FOLDER_FIRST = re.compile(r"(?i)^\s*(?:[-*+]|\d+\.)\s+" + _FOLDER + r"\s*(?::|\s[-\u2013\u2014]\s|\()\s*"
                           + _NUMBER + _COUNTED + r"\b")
_NEGATED = re.compile(r"(?i)\b(?:no|not|never|about|around|roughly|approximately|~)\b")


@dataclass(frozen=True, slots=True)
class CountFinding:
    """A count against the tree: whether it holds now (None: the folder is not in the tree),
    and whether it held when the memory file was added."""

    holds: bool | None
    now: int
    then: int | None
    added: str
    held: bool = False  # the count held when the memory file was added

    @property
    def detail(self) -> str:
        earlier = f"; when the memory file was added ({self.added[:10]}) it had {self.then}" if self.then is not None \
            else ""
        return f"the folder has {self.now} entries{earlier}"


def count_facts(line: MemoryLine) -> tuple[MemoryFact, ...]:
    """The folder counts ``line`` states, as ``fs.entry_count[FOLDER]`` facts (none on a line that
    hedges or negates, none in a user's own memory file)."""
    if line.file.kind in ("user", "auto", "parent") or _NEGATED.search(line.text):
        return ()
    matches = [*_COUNT.finditer(line.text), *_FOLDER_FIRST.finditer(line.text)]
    return tuple(MemoryFact(key=f"{COUNT_KEY}{match.group('folder')}]",
                            value=str(_WORDS.get(match.group("count").lower(), match.group("count")))
                            + (match.group("more") or ""), value_type=ValueType.STRING,
                            scope=line.file.scope, rule="entry_count")
                 for match in matches)


def _holds(claimed: str, count: int) -> bool:
    number = int(claimed.rstrip("+"))
    return count >= number if claimed.endswith("+") else count == number


def _entries(listing: list[str], folder: str) -> int:
    prefix = folder.strip("/") + "/"
    return len({path[len(prefix):].split("/")[0] for path in listing if path.startswith(prefix)})


def judge_count(tree: TreeIndex, folder: str, claimed: str, since_file: str) -> CountFinding:
    """``claimed`` (``15+`` or ``4``) entries in ``folder`` (from the root), now and when
    ``since_file`` (a memory file's path from the root) was added."""
    folder = folder.strip("/")
    if not tree.exists(folder):
        return CountFinding(None, 0, None, "")
    now = _entries(tree.matching(f"{folder}/*"), folder)
    if _holds(claimed, now):
        return CountFinding(True, now, None, "")
    added = tree.added_commit(since_file)
    then = _entries(tree.matching_at(added, f"{folder}/*"), folder) if added else None
    return CountFinding(False, now, then, added, then is not None and _holds(claimed, then))
