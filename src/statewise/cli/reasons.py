"""A guard's reason as lines for a person: the sentence, then one line per fact it rests on, and
one line per distinct error (facts that could not be observed for the same error share it; the
gate already merges them, :mod:`statewise.pipeline.reasons`, and a reason kept from before is
merged here).
"""

from __future__ import annotations

from statewise.pipeline.reasons import merge_unobserved, split_facts

__all__ = ["reason_lines"]


def reason_lines(reason: str) -> list[str]:
    """The reason's sentence, then its facts one a line; facts that could not be observed for the
    same error become one line naming every key and the error once."""
    head, facts = split_facts(reason)
    if not facts:
        return [reason]
    return [head, *merge_unobserved(facts)]
