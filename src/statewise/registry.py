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

# No `from __future__ import annotations`: the named tuples below get real types, because
# types given as text are compiled when the class is made, and a process's first compile()
# sets up Python's AST types, about a quarter of `python -c pass` (docs/performance-cli.md).
import os
import sys
from collections.abc import Callable
from functools import reduce
from importlib import import_module
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

from statewise.errors import MissingExtraError, UnknownPluginError

if TYPE_CHECKING:  # importlib.metadata is imported where it is used (below)
    from importlib.metadata import EntryPoint

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

#: The name StateWise's own distribution has in its metadata folder's name.
OWN_DISTRIBUTION = "statewise"


class Loadable(Protocol):
    """An entry point: what it names is imported by :meth:`load`."""

    def load(self) -> Any: ...


class OwnEntryPoint(NamedTuple):
    """One of StateWise's own entry points, read from its ``entry_points.txt``: ``value`` is
    ``module:attribute`` (the only form StateWise declares), loaded as
    ``importlib.metadata.EntryPoint.load`` loads it. (This module's records are named tuples:
    ``statewise record list`` imports it to open the store, and a frozen dataclass costs
    several times more to define, docs/performance-cli.md.)"""

    name: str
    value: str

    def load(self) -> Any:
        module, _, attribute = self.value.partition(":")
        return reduce(getattr, filter(None, attribute.split(".")), import_module(module))


def _own_metadata_folder() -> str | None:
    """The folder of StateWise's own metadata (``statewise-*.dist-info``) that
    ``importlib.metadata.distribution("statewise")`` would read: the first ``sys.path``
    directory holding one. None when it is not there in that plain form (an egg, a zip, two
    candidates in one directory): the caller then asks importlib.metadata."""
    prefix = OWN_DISTRIBUTION + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            return None  # a zip on the path, which importlib.metadata searches too
        except OSError:
            continue
        found = [name for name in names if name.lower().startswith(prefix)
                 and name.lower().endswith((".dist-info", ".egg-info"))]
        if len(found) == 1 and found[0].lower().endswith(".dist-info"):
            return os.path.join(entry or ".", found[0])
        if found:
            return None
    return None


def read_own_entry_points() -> dict[str, dict[str, OwnEntryPoint]] | None:
    """StateWise's own entry points by group, read from its ``entry_points.txt`` without
    importing importlib.metadata (whose import alone costs several times the interpreter's
    start-up: ``statewise record list`` opens the SQLite backend through this registry,
    docs/performance-cli.md). None when the file is not found in the plain form, or holds
    a line this reader does not take exactly as importlib.metadata does: the caller falls
    back to importlib.metadata. ``tests/test_registry.py`` compares the two readings."""
    folder = _own_metadata_folder()
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    groups: dict[str, dict[str, OwnEntryPoint]] = {}
    group: dict[str, OwnEntryPoint] | None = None
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = groups.setdefault(line[1:-1].strip(), {})
            continue
        name, equals, value = (part.strip() for part in line.partition("="))
        module, colon, attribute = value.partition(":")
        plain = colon and all(part.isidentifier() for part in (*module.split("."), *attribute.split(".")))
        if group is None or not equals or not plain or name in group:
            return None  # a form importlib.metadata reads its own way (extras, a bare module, ...)
        group[name] = OwnEntryPoint(name, value)
    return groups


_OWN: list[dict[str, dict[str, OwnEntryPoint]] | None] = []


class Registry(Generic[T]):
    """Named plugins of one kind, loaded lazily from the entry-point ``group``."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._loaded: dict[str, T] = {}
        self._builtins: dict[str, Loadable] | None = None
        self._entry_points: dict[str, EntryPoint] | None = None

    def _builtin(self) -> dict[str, Loadable]:
        """The group's entry points in StateWise's own metadata: read from one distribution,
        not every installed one (the scan costs a hook call several milliseconds a group),
        and from its file directly when it is in the plain form (:func:`read_own_entry_points`)."""
        if self._builtins is None:
            if not _OWN:
                _OWN.append(read_own_entry_points())
            own = _OWN[0]
            if own is not None:
                self._builtins = dict(own.get(self.group, {}))
                return self._builtins
            from importlib.metadata import PackageNotFoundError, distribution

            try:
                found = distribution(OWN_DISTRIBUTION).entry_points.select(group=self.group)
            except PackageNotFoundError:  # run from a source tree that was never installed
                self._builtins = {}
            else:
                self._builtins = {ep.name: ep for ep in found}
        return self._builtins

    def _discover(self) -> "dict[str, EntryPoint]":
        if self._entry_points is None:
            from importlib.metadata import entry_points

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
        entry_point: Loadable | None = self._builtin().get(name)
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


class ExtensionPoint(NamedTuple):
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
    from importlib.metadata import entry_points

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
