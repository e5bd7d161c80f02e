"""Which part of a sentence a negation or an example word speaks of.

A memory line often states one thing and rejects another in the same sentence: "Uses `uv` for
dependencies (NOT pip)", "use `uv add`, never `uv pip`", "ESLint rules (`eslint.config.js`), no
unused imports". A veto word read over the whole line loses the claim beside the rejection. A
negation speaks of its own clause (back to the nearest comma, semicolon or bracket) and of what
follows it up to a semicolon or the end of the sentence ("do not edit `a/`, `b/` or `c/`"). An
example word ("for example", "such as", "e.g."; the rule's ``example`` group) speaks of its
whole sentence, so "`foo_test.go`, for example" is still an example; a match in the rule's
``line`` group (a folder "currently empty") speaks of the whole line. Brackets, commas and
periods inside code spans are the span's text, not sentence structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Vetoes"]

_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# a full stop (not the one of "e.g.", "i.e.", "etc.", "vs."), "!" or "?" before a space or the end
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?](?=\s|$)")
_CLAUSE_MARKS = frozenset(",;()[]")
_FORWARD_STOPS = frozenset(";")


@dataclass(frozen=True, slots=True)
class Vetoes:
    """The character ranges of one line that the matches of a veto pattern speak of."""

    ranges: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, text: str, veto: str | re.Pattern[str] | None) -> Vetoes:
        """The ranges of ``text`` vetoed by ``veto`` (a match in its ``line`` group, if it has
        one, vetoes the whole line, in its ``example`` group the whole sentence; any other
        match its clause and what follows)."""
        if veto is None:
            return cls(())
        pattern = re.compile(veto) if isinstance(veto, str) else veto
        matches = list(pattern.finditer(text))
        if not matches:
            return cls(())
        inside = [False] * len(text)
        for span in _CODE_SPAN.finditer(text):
            for index in range(span.start(), span.end()):
                inside[index] = True
        ends = {m.start() for m in _SENTENCE_END.finditer(text) if not inside[m.start()]}
        ranges = []
        for match in matches:
            if "line" in pattern.groupindex and match.group("line") is not None:
                return cls(((0, len(text)),))
            example = "example" in pattern.groupindex and match.group("example") is not None
            start = match.start()
            while start > 0:
                previous = start - 1
                if not inside[previous] and (previous in ends or (not example and text[previous] in _CLAUSE_MARKS)):
                    break
                start = previous
            end = match.end()
            while end < len(text):
                if not inside[end] and (end in ends or (not example and text[end] in _FORWARD_STOPS)):
                    break
                end += 1
            ranges.append((start, end))
        return cls(tuple(ranges))

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def covers(self, start: int, end: int) -> bool:
        """Whether the text from ``start`` to ``end`` overlaps a vetoed range."""
        return any(start < stop and begin < end for begin, stop in self.ranges)
