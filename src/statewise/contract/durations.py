"""Durations as a contract writes them (``30m``, ``12h``, ``7d``, ``1h30m``) and as seconds."""

from __future__ import annotations

import re
from typing import Any

_DURATION_UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION = re.compile(r"^(\d+[wdhms])+$")
_DURATION_PART = re.compile(r"(\d+)([wdhms])")


def parse_duration(text: str) -> int:
    """Parse ``"90s"``, ``"30m"``, ``"12h"``, ``"7d"``, ``"2w"`` or ``"1h30m"`` into seconds.

    A string of digits alone is seconds. Raises ValueError for anything else or for zero.
    """
    compact = text.strip().replace(" ", "").lower()
    if compact.isdigit():
        seconds = int(compact)
    elif _DURATION.match(compact):
        seconds = sum(int(n) * _DURATION_UNITS[unit] for n, unit in _DURATION_PART.findall(compact))
    else:
        raise ValueError(
            f"expected a number of seconds or a duration such as 30m, 12h, 7d or 1h30m; got {text!r}"
        )
    if seconds < 1:
        raise ValueError(f"a TTL must be at least one second; got {text!r}")
    return seconds


def format_duration(seconds: int) -> str:
    """The shortest duration string for ``seconds`` (``5400`` -> ``"1h30m"``); inverse of parse."""
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 1:
        raise ValueError(f"a duration is a positive number of seconds; got {seconds!r}")
    parts = []
    remaining = seconds
    for unit, size in _DURATION_UNITS.items():
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def parse_ttl(value: Any) -> Any:
    """A before-validator for ``ttl``: None, seconds (an int >= 1) or a duration string."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"expected seconds (an int >= 1) or a duration such as 30m, 12h, 7d; got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"a TTL must be at least one second; got {value!r}")
        return value
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError(f"expected seconds (an int >= 1) or a duration such as 30m, 12h, 7d; got {value!r}")
