"""One typed registry for every extension point.

Built-ins are registered exactly as a third-party package registers its own: through an
entry-point group in its packaging metadata. StateWise's own ``pyproject.toml`` declares::

    [project.entry-points."statewise.backends"]
    sqlite = "statewise.store.sqlite:SQLiteStore"

and a plugin does the same in its own ``pyproject.toml``. Code that cannot ship packaging
metadata (a test, a notebook) can call :meth:`Registry.register` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from statewise.errors import MissingExtraError, UnknownPluginError

__all__ = ["Registry", "UnknownPluginError"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Named plugins of one kind, loaded lazily from the entry-point ``group``."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._loaded: dict[str, T] = {}
        self._entry_points: dict[str, object] | None = None

    def _discover(self) -> dict[str, object]:
        if self._entry_points is None:
            self._entry_points = {ep.name: ep for ep in entry_points(group=self.group)}
        return self._entry_points

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register ``obj`` under ``name`` (overrides an entry point of that name)."""

        def decorate(obj: T) -> T:
            self._loaded[name] = obj
            return obj

        return decorate

    def get(self, name: str) -> T:
        if name in self._loaded:
            return self._loaded[name]
        entry_point = self._discover().get(name)
        if entry_point is None:
            raise UnknownPluginError(self.kind, name, self.names())
        try:
            loaded = entry_point.load()  # type: ignore[attr-defined]
        except ModuleNotFoundError as error:
            missing = MissingExtraError.of(f"the {name} {self.kind}", error)
            if missing is None:
                raise
            raise missing from None
        self._loaded[name] = loaded
        return loaded

    def names(self) -> list[str]:
        return sorted(set(self._loaded) | set(self._discover()))
