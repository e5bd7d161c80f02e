"""One registry for every extension point.

Every kind of plugin is an :class:`ExtensionPoint` in :data:`EXTENSION_POINTS`, reachable
through an entry-point group, and its table answers the same two questions (``get(name)``,
``names()``) whichever module keeps it:

=========  ==========================  =========================================
point      entry-point group           table
=========  ==========================  =========================================
backends   ``statewise.backends``      :data:`statewise.store.BACKENDS`
planners   ``statewise.planners``      :data:`statewise.planners.PLANNERS`
verifiers  ``statewise.verifiers``     :data:`statewise.verifiers.VERIFIERS`
methods    ``statewise.bench_methods`` :data:`statewise.bench.methods.METHOD_PLUGINS`
checks     ``statewise.bench_checks``  :data:`statewise.bench.checks.CHECK_PLUGINS`
=========  ==========================  =========================================

Built-in backends, planners and verifiers are registered exactly as a third-party package
registers its own: through the entry-point group in its packaging metadata. StateWise's own
``pyproject.toml`` declares::

    [project.entry-points."statewise.backends"]
    sqlite = "statewise.store.sqlite:SQLiteStore"

and a plugin does the same in its own ``pyproject.toml``. Code that cannot ship packaging
metadata (a test, a notebook) can call :meth:`Registry.register` instead. A package's entry
point never replaces a built-in of the same name: StateWise's own metadata is read first.
The bench's built-in methods and check kinds are defined in code beside the bench (a method
name such as ``no_repair`` is made, not declared); third parties add theirs through the two
groups. This module knows every extension point by name and by the ``module:attribute`` of its
table, never by import: the registry sits below everything that registers into it (the
layers contract in ``pyproject.toml`` checks that).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import EntryPoint, PackageNotFoundError, distribution, entry_points
from typing import Any, Generic, Protocol, TypeVar

from statewise.errors import MissingExtraError, UnknownPluginError

__all__ = [
    "EXTENSION_POINTS",
    "ExtensionPoint",
    "PluginTable",
    "Registry",
    "UnknownPluginError",
    "load_group",
    "table",
]

T = TypeVar("T")


class Registry(Generic[T]):
    """Named plugins of one kind, loaded lazily from the entry-point ``group``."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._loaded: dict[str, T] = {}
        self._builtins: dict[str, EntryPoint] | None = None
        self._entry_points: dict[str, EntryPoint] | None = None

    def _builtin(self) -> dict[str, EntryPoint]:
        """The group's entry points in StateWise's own metadata: read from one distribution,
        not every installed one (the scan costs a hook call several milliseconds a group)."""
        if self._builtins is None:
            try:
                own = distribution("statewise").entry_points.select(group=self.group)
            except PackageNotFoundError:  # run from a source tree that was never installed
                self._builtins = {}
            else:
                self._builtins = {ep.name: ep for ep in own}
        return self._builtins

    def _discover(self) -> dict[str, EntryPoint]:
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
        """The plugin registered as ``name``; UnknownPluginError naming the known ones if none is."""
        if name in self._loaded:
            return self._loaded[name]
        # A built-in name is StateWise's own, whatever else declares it; only another name
        # needs every installed package's metadata.
        entry_point = self._builtin().get(name)
        if entry_point is None:
            entry_point = self._discover().get(name)
        if entry_point is None:
            raise UnknownPluginError(self.kind, name, self.names())
        try:
            loaded: T = entry_point.load()  # whatever the entry point names is this table's T
        except ModuleNotFoundError as error:
            missing = MissingExtraError.of(f"the {name} {self.kind}", error)
            if missing is None:
                raise
            raise missing from None
        self._loaded[name] = loaded
        return loaded

    def names(self) -> list[str]:
        """Every name registered or declared by an entry point, sorted."""
        return sorted(set(self._loaded) | set(self._discover()))


class PluginTable(Protocol):
    """What every extension point offers, whatever keeps its table."""

    kind: str
    group: str

    def get(self, name: str) -> Any: ...

    def names(self) -> list[str]: ...


@dataclass(frozen=True)
class ExtensionPoint:
    """One kind of plugin: the entry-point group a package declares it in, and its table."""

    name: str
    kind: str
    group: str
    #: ``module:attribute`` of the table; imported only when asked for, so listing the
    #: extension points costs nothing.
    table: str
    #: What an entry point of the group must name.
    provides: str

    def load(self) -> PluginTable:
        """The table of this extension point (imports the module that owns it)."""
        module, _, attribute = self.table.partition(":")
        table: PluginTable = getattr(import_module(module), attribute)
        return table


#: Every extension point StateWise has, by name. ``statewise.registry.table(name)`` gives its
#: table; a package adds a plugin by declaring an entry point in the point's ``group``.
EXTENSION_POINTS: dict[str, ExtensionPoint] = {point.name: point for point in (
    ExtensionPoint("backends", "store backend", "statewise.backends", "statewise.store:BACKENDS",
                   "a Store class, looked up by the location's URL scheme"),
    ExtensionPoint("planners", "planner", "statewise.planners", "statewise.planners:PLANNERS",
                   "a planner factory: called with no argument, or with the model for NAME:MODEL"),
    ExtensionPoint("verifiers", "verifier", "statewise.verifiers", "statewise.verifiers:VERIFIERS",
                   "a verifier adapter: a class, an instance, or a callable taking a request"),
    ExtensionPoint("methods", "bench method", "statewise.bench_methods", "statewise.bench.methods:METHOD_PLUGINS",
                   "a bench method factory, or a module that registers its methods when imported"),
    ExtensionPoint("checks", "check kind", "statewise.bench_checks", "statewise.bench.checks:CHECK_PLUGINS",
                   "a statewise.bench.checks.CheckModel subclass whose `kind` is a one-value Literal"),
)}


def table(point: str) -> PluginTable:
    """The plugin table of the extension point named ``point`` (``backends``, ``methods``, ...)."""
    try:
        extension_point = EXTENSION_POINTS[point]
    except KeyError:
        raise UnknownPluginError("extension point", point, sorted(EXTENSION_POINTS)) from None
    return extension_point.load()


def load_group(group: str) -> dict[str, Any]:
    """Every entry point of ``group``, loaded, by name (the object each one names)."""
    loaded: dict[str, Any] = {}
    for entry_point in entry_points(group=group):
        try:
            loaded[entry_point.name] = entry_point.load()
        except ModuleNotFoundError as error:
            missing = MissingExtraError.of(f"the {entry_point.name} plugin of {group}", error)
            if missing is None:
                raise
            raise missing from None
    return loaded
