"""The filter a retrieval applies when it is given keys or text."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol


class Keyed(Protocol):
    """What the filter reads of a record: a Record or a RecordRow."""

    @property
    def key(self) -> str: ...

    @property
    def value(self) -> Any: ...


__all__ = ["key_matcher"]


def key_matcher(keys: Sequence[str] | None, text: str | None) -> Callable[[Keyed], bool] | None:
    """A filter for records by key and text, or None when nothing is filtered."""
    if not keys and text is None:
        return None
    exact = set(keys or ())
    bases = {k for k in exact if "[" not in k}
    needle = text.lower() if text else None

    def wanted(record: Keyed) -> bool:
        # The base of a qualified key (records.base_key, which would import the models).
        if exact and record.key not in exact and record.key.split("[", 1)[0] not in bases:
            return False
        if needle is not None:
            haystack = f"{record.key} {json.dumps(record.value)}".lower()
            if needle not in haystack:
                return False
        return True

    return wanted
