"""The filter a retrieval applies when it is given keys or text."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from statewise.records import Record, base_key

__all__ = ["key_matcher"]


def key_matcher(keys: Sequence[str] | None, text: str | None) -> Callable[[Record], bool] | None:
    """A filter for records by key and text, or None when nothing is filtered."""
    if not keys and text is None:
        return None
    exact = set(keys or ())
    bases = {k for k in exact if "[" not in k}
    needle = text.lower() if text else None

    def wanted(record: Record) -> bool:
        if exact and record.key not in exact and base_key(record.key) not in bases:
            return False
        if needle is not None:
            haystack = f"{record.key} {json.dumps(record.value)}".lower()
            if needle not in haystack:
                return False
        return True

    return wanted
