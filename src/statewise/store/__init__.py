"""The persistent record store and how to open one.

``open_store()`` picks the backend from the location: a ``postgresql://`` (or
``postgres://``) URL opens PostgreSQL; anything else is a SQLite file path. With no
location it uses ``$STATEWISE_STORE``, else ``.statewise/store.db`` at the root of the
current git checkout (or the current directory outside git).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from statewise.records import KeySchema
from statewise.registry import Registry
from statewise.store.base import Store

__all__ = ["BACKENDS", "Store", "default_location", "open_store"]

#: Store backends by URL scheme; third parties register through ``statewise.backends``.
BACKENDS: Registry[type[Store]] = Registry("store backend", "statewise.backends")

_SCHEME_ALIASES = {"postgres": "postgresql", "sqlite": "sqlite"}


def default_location(cwd: str | Path | None = None) -> str:
    """Where the store lives when nobody says: ``$STATEWISE_STORE``, else the project's
    ``.statewise/store.db``."""
    env = os.environ.get("STATEWISE_STORE")
    if env:
        return env
    base = Path(cwd or os.getcwd())
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=base, capture_output=True, text=True, timeout=5
        )
        if top.returncode == 0 and top.stdout.strip():
            base = Path(top.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        pass
    return str(base / ".statewise" / "store.db")


def open_store(location: str | None = None, *, key_schema: KeySchema | None = None) -> Store:
    """Open (creating and migrating if needed) the store at ``location``."""
    location = location or default_location()
    scheme, sep, rest = location.partition("://")
    if sep and scheme.isidentifier():
        backend = BACKENDS.get(_SCHEME_ALIASES.get(scheme, scheme))
        if scheme == "sqlite":
            return backend(rest, key_schema=key_schema)  # type: ignore[call-arg]
        return backend(location, key_schema=key_schema)  # type: ignore[call-arg]
    return BACKENDS.get("sqlite")(location, key_schema=key_schema)  # type: ignore[call-arg]
