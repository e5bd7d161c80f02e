"""Numbered, append-only schema migrations, one folder per SQL dialect.

A migration file is never edited once released: a schema change is a new file
``NNNN_name.sql``. Each store records the migrations it applied in ``sw_migrations``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["FORMAT_MARKER", "Migration", "migrations_for"]

#: Written into ``sw_meta`` so that a StateWise store is told apart from any other database.
FORMAT_MARKER = "statewise-store"

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    number: int
    name: str
    sql: str


@cache
def migrations_for(dialect: str) -> tuple[Migration, ...]:
    """The migrations of ``dialect`` (``sqlite`` or ``postgres``), in order, checked to be
    numbered 1, 2, 3, ... without gaps."""
    found = []
    for entry in resources.files(__package__).joinpath(dialect).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.number)
    for expected, migration in enumerate(found, start=1):
        if migration.number != expected:
            raise RuntimeError(f"{dialect} migrations are not numbered 1..n: missing {expected:04d}")
    return tuple(found)
