"""An operation's risk class."""

from __future__ import annotations

import enum


class Risk(str, enum.Enum):
    """An operation's risk class, from harmless to irreversible."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return list(Risk).index(self)

    def __str__(self) -> str:
        return self.value
