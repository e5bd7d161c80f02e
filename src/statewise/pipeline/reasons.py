"""Facts a reason rests on, told once per distinct error.

The gate writes an invariant's reason as ``MESSAGE [FACT; FACT; ...]``, and a fact it could not
establish as ``KEY: unknown (ACTOR could not observe KEY: DETAIL)`` (:mod:`.resolution`). Without
a network, every key read from the same host fails with the same error, and the agent would read
that error once per key (a stop line of about 1,000 characters for a push): facts that failed
for the same error become one, naming every key and the error once. ``statewise guard`` prints
the same facts one a line (:mod:`statewise.cli.reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["merge_unobserved", "split_facts"]

#: The note a cached failure carries; the same error, not a different one.
_CACHED_NOTE = " (cached: "


@dataclass(frozen=True)
class _Unobserved:
    key: str
    detail: str
    fact: str

    @property
    def cause(self) -> str:
        """The error itself: the detail's last ``: ``-separated part, without the cache note."""
        return self.detail.rsplit(": ", 1)[-1]


def split_facts(reason: str) -> tuple[str, list[str]]:
    """``MESSAGE [A; B]`` -> (MESSAGE, [A, B]), splitting only at the top level of brackets
    and parentheses; a reason without a trailing bracketed list comes back whole."""
    if not reason.endswith("]"):
        return reason, []
    depth = 0
    for index in range(len(reason) - 1, -1, -1):
        char = reason[index]
        depth += char in ")]"
        depth -= char in "(["
        if depth == 0:
            break
    else:
        return reason, []
    if index == 0 or reason[index - 1] != " ":
        return reason, []
    inner, facts, depth, start = reason[index + 1:-1], [], 0, 0
    for position, char in enumerate(inner):
        depth += char in "(["
        depth -= char in ")]"
        if depth == 0 and inner.startswith("; ", position):
            facts.append(inner[start:position])
            start = position + 2
    facts.append(inner[start:])
    return reason[:index - 1], facts


def _unobserved(fact: str) -> _Unobserved | None:
    key, sep, rest = fact.partition(": unknown (")
    marker = f" could not observe {key}: "
    if not sep or not rest.endswith(")") or marker not in rest:
        return None
    detail = rest[:-1].split(marker, 1)[1]
    cached = detail.find(_CACHED_NOTE)
    if cached != -1 and detail.endswith(")"):
        detail = detail[:cached]
    return _Unobserved(key, detail, fact)


def _common_tail(details: list[str]) -> str:
    """The longest ending every detail shares that starts at a ``: `` boundary of each."""
    parts = [detail.split(": ") for detail in details]
    shared: list[str] = []
    for pieces in zip(*(reversed(p) for p in parts), strict=False):
        if len(set(pieces)) != 1:
            break
        shared.insert(0, pieces[0])
    return ": ".join(shared)


def merge_unobserved(facts: list[str]) -> list[str]:
    """``facts`` in order, those unobserved for the same error merged into one fact naming every
    key and the error once (at the place of the first); the rest unchanged."""
    groups: dict[str, list[_Unobserved]] = {}
    order: list[str | _Unobserved] = []
    for fact in facts:
        unobserved = _unobserved(fact)
        if unobserved is None:
            order.append(fact)
            continue
        if unobserved.cause not in groups:
            groups[unobserved.cause] = []
            order.append(unobserved)
        groups[unobserved.cause].append(unobserved)
    merged: list[str] = []
    for item in order:
        if isinstance(item, str):
            merged.append(item)
            continue
        group = groups[item.cause]
        if len(group) == 1:
            merged.append(item.fact)
            continue
        keys = ", ".join(dict.fromkeys(member.key for member in group))
        details = list(dict.fromkeys(member.detail for member in group))
        detail = details[0] if len(details) == 1 else _common_tail(details)
        merged.append(f"{keys}: unknown ({detail})")
    return merged
