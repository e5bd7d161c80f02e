"""Numbered, append-only schema migrations, one folder per SQL dialect.

A migration file is never edited once released: a schema change is a new file
``NNNN_name.sql``. Each store records the migrations it applied in ``sw_migrations``.
"""

# No `from __future__ import annotations`: the named tuples below get real types, because
# types given as text are compiled when the class is made, and a process's first compile()
# sets up Python's AST types, about a quarter of `python -c pass` (docs/performance-cli.md).
import os
import re
from collections.abc import Iterator
from functools import cache
from typing import NamedTuple

__all__ = ["FORMAT_MARKER", "Migration", "migrations_for"]

#: Written into ``sw_meta`` so that a StateWise store is told apart from any other database.
FORMAT_MARKER = "statewise-store"

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class Migration(NamedTuple):
    """One migration file: its number, its name and its SQL. (A named tuple: every store open
    imports this module, and a frozen dataclass costs several times more to define.)"""

    number: int
    name: str
    sql: str


@cache
def migrations_for(dialect: str) -> tuple[Migration, ...]:
    """The migrations of ``dialect`` (``sqlite`` or ``postgres``), in order, checked to be
    numbered 1, 2, 3, ... without gaps."""
    found = []
    for match, text in _migration_files(dialect):
        found.append(Migration(int(match.group(1)), match.group(2), text))
    found.sort(key=lambda m: m.number)
    for expected, migration in enumerate(found, start=1):
        if migration.number != expected:
            raise RuntimeError(f"{dialect} migrations are not numbered 1..n: missing {expected:04d}")
    return tuple(found)


def _migration_files(dialect: str) -> Iterator[tuple[re.Match[str], str]]:
    """The dialect folder's migration files: each name's match and the file's text. A package
    on disk is listed with os (every store open checks its migrations, and importlib.resources'
    import costs more than the interpreter's start-up: docs/performance-cli.md); a package in a
    zip through importlib.resources."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), dialect)
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            match = _NAME.match(name)
            if match:
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    yield match, handle.read()
        return
    from importlib import resources

    for entry in resources.files(__package__).joinpath(dialect).iterdir():
        match = _NAME.match(entry.name)
        if match:
            yield match, entry.read_text(encoding="utf-8")
