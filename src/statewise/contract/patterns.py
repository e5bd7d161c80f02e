"""Time-bounded regular expressions for contract patterns.

A contract's patterns (verifier reads, observation rules, memory rules) run on text the
contract's author does not control. They are compiled with the ``regex`` package, whose
matching takes a timeout: a pathological pattern is cut off instead of blocking the hook.
``regex`` is imported at the first compile, so importing the contract imports none of it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from statewise.errors import StateWiseError

if TYPE_CHECKING:
    import regex

#: Time bound of one match of a contract pattern.
REGEX_TIMEOUT_SECONDS = 0.25


class RegexTimeout(StateWiseError, TimeoutError):
    """A contract pattern did not finish matching within its time bound (no answer, not "no match")."""


@dataclass(frozen=True, slots=True)
class ContractPattern:
    """A compiled contract pattern whose searches are time-bounded."""

    pattern: str
    compiled: regex.Pattern[str]

    @property
    def groups(self) -> int:
        """How many capturing groups the pattern has."""
        return self.compiled.groups

    def search(self, text: str, *, timeout: float = REGEX_TIMEOUT_SECONDS) -> regex.Match[str] | None:
        """The first match in ``text`` or None; RegexTimeout past ``timeout`` seconds."""
        try:
            return self.compiled.search(text, timeout=timeout)
        except TimeoutError:
            raise RegexTimeout(
                f"the pattern {self.pattern!r} did not finish matching within {timeout}s"
            ) from None

    def finditer(self, text: str, *, timeout: float = REGEX_TIMEOUT_SECONDS) -> list[regex.Match[str]]:
        """Every match in ``text``; RegexTimeout when all of them take past ``timeout`` seconds."""
        try:
            return list(self.compiled.finditer(text, timeout=timeout))
        except TimeoutError:
            raise RegexTimeout(
                f"the pattern {self.pattern!r} did not finish matching within {timeout}s"
            ) from None


@functools.lru_cache(maxsize=256)
def contract_regex(pattern: str, *, multiline: bool = False) -> ContractPattern:
    """Compile a contract pattern (ValueError if it is not valid) for time-bounded searches."""
    import regex  # noqa: PLC0415 - only processes that match contract patterns need it

    try:
        compiled = regex.compile(pattern, regex.MULTILINE if multiline else 0)
    except (regex.error, TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"not a valid regular expression: {error}") from None
    return ContractPattern(pattern, compiled)


def compiles(value: str) -> str:
    """A field validator: ``value`` is a valid contract pattern (ValueError otherwise)."""
    contract_regex(value)
    return value
