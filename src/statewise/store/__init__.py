"""The persistent record store and how to open one.

``open_store()`` picks the backend from the location: a ``postgresql://`` (or
``postgres://``) URL opens PostgreSQL; anything else is a SQLite file path. With no
location it uses ``$STATEWISE_STORE``, else ``.statewise/store.db`` at the root of the
current git worktree (see :func:`default_location`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from statewise.errors import StoreUnavailableError
from statewise.registry import Registry
from statewise.store.base import Store

if TYPE_CHECKING:  # a protocol, for annotations: the models (pydantic) stay unimported
    from statewise.records import KeySchema

__all__ = ["BACKENDS", "LONG_LIVED_POOL_SIZE", "Store", "default_location", "open_store"]

#: Store backends by URL scheme; third parties register through ``statewise.backends``.
BACKENDS: Registry[type[Store]] = Registry("store backend", "statewise.backends")

_SCHEME_ALIASES = {"postgres": "postgresql", "sqlite": "sqlite"}


def default_location(cwd: str | Path | None = None) -> str:
    """Where the store lives when nobody says: ``$STATEWISE_STORE``, else ``.statewise/store.db``
    at the root of the git worktree holding ``cwd`` (never in a subdirectory of it).

    The root comes from ``git rev-parse --show-toplevel``; when git cannot answer, from the
    nearest directory above ``cwd`` holding ``.git``. Outside any repository it is the
    nearest directory above ``cwd`` that already has a ``.statewise/store.db``, else ``cwd``.
    """
    env = os.environ.get("STATEWISE_STORE")
    if env:
        return env
    from statewise.workspace import find_repository_root  # workspace imports scopes only

    base = Path(cwd or os.getcwd())
    top = find_repository_root(base)
    if top is not None:
        return str(top / ".statewise" / "store.db")
    try:
        resolved = base.resolve()
    except (OSError, ValueError) as error:
        raise StoreUnavailableError(str(base), f"cannot tell where the project's store is: {error}") from None
    for directory in (resolved, *resolved.parents):
        candidate = directory / ".statewise" / "store.db"
        if candidate.is_file():
            return str(candidate)
    return str(resolved / ".statewise" / "store.db")


#: Connections a long-lived process keeps open to a PostgreSQL store (see ``open_store``).
LONG_LIVED_POOL_SIZE = 8


def open_store(location: str | None = None, *, key_schema: KeySchema | None = None,
               check_integrity: bool = True, long_lived: bool = False) -> Store:
    """Open (creating and migrating if needed) the store at ``location``.

    A store whose one-active guarantee was tampered with is refused (StoreCorruptError naming
    the key and scope); ``check_integrity=False`` opens it anyway, for ``store check``.
    ``long_lived=True`` is for a process that keeps the store for hours and serves several
    threads (the MCP server): a PostgreSQL store then uses a connection pool of at most
    LONG_LIVED_POOL_SIZE connections, which replaces connections the server dropped.
    """
    location = location or default_location()
    options: dict[str, object] = {"key_schema": key_schema}
    if not check_integrity:
        options["check_integrity"] = False
    scheme, sep, rest = location.partition("://")
    if sep and scheme.isidentifier():
        name = _SCHEME_ALIASES.get(scheme, scheme)
        backend = BACKENDS.get(name)
        if long_lived and name == "postgresql":
            options["pool_size"] = LONG_LIVED_POOL_SIZE
        if scheme == "sqlite":
            return backend(rest, **options)  # type: ignore[call-arg]
        return backend(location, **options)  # type: ignore[call-arg]
    return BACKENDS.get("sqlite")(location, **options)  # type: ignore[call-arg]
