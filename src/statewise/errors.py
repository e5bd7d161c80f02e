"""The exceptions StateWise raises.

An exception means StateWise could not do what was asked; a blocked action is never an
exception (it is a ``Decision``). Every error carries the context a caller needs to say
what went wrong in one line, and ``str(error)`` is that line.

Every public exception StateWise raises is in this tree (``tests/test_errors.py`` walks the
package to keep it so). The classes defined here are the ones a caller of the public API
catches; the others live beside the code that raises them, named on the right. Where a
caller already caught a built-in (``ValueError``, ``TimeoutError``, ``LookupError``,
``RuntimeError``), the class derives from it too, so those ``except`` clauses still work.

::

    StateWiseError
     ├── InputError                 bad input: names the input and the field (also ValueError)
     │    ├── ValueTypeError        a value that is not of its key's declared type
     │    ├── ScopeError            a scope string that does not parse
     │    ├── KeyNameError          a malformed key, or one the contract does not declare
     │    ├── ContractError         a contract file that does not validate
     │    ├── GroundingError        evidence not bound to the record's key, type and scope
     │    ├── ImportFormatError     a malformed line in a JSON Lines import
     │    ├── UnknownPluginError    no plugin of that kind has that name
     │    ├── InputTooLargeError    an input file over its size cap (statewise.limits), refused unread
     │    ├── CaseError             a bench case file that does not validate (statewise.bench.case)
     │    ├── TransferError         a bench transfer.json that does not validate
     │    │                                                                 (statewise.bench.runner)
     │    ├── StoreNotFoundError    no store where one is required (with a did-you-mean)
     │    │                                                                    (statewise.settings)
     │    └── VerifierArgumentError a binding's argument the adapter does not take
     │                                                                    (statewise.verifiers.base)
     ├── ExpressionError            a CEL expression failed (also ValueError)   (statewise.expressions)
     │    ├── ExpressionSyntaxError   the text is not a CEL expression
     │    ├── ExpressionNameError     a variable or function the environment lacks
     │    └── ExpressionTimeout       no answer in time: unresolved, never true or false
     ├── RegexTimeout               a contract pattern ran past its time bound (also TimeoutError)
     │                                                                  (statewise.contract.patterns)
     ├── PlaceholderError           a binding's placeholder has no value (also ValueError)
     │    │                                                              (statewise.verifiers.runner)
     │    └── UnsafeValueError      a placeholder value that would change what the command means
     ├── ConfigGarbage              ``git config --null --list`` output that is not a listing
     │                                                (also ValueError)  (statewise.verifiers.protection)
     ├── UnsupportedAction          the executor does not run this operation (also ValueError)
     │                                                                            (statewise.execute)
     ├── UnsupportedByBench         the bench cannot perform it; the episode is unjudged
     │                                                 (also RuntimeError)  (statewise.bench.executor)
     ├── SandboxError               a bench sandbox could not be built (also RuntimeError)
     │                                                                      (statewise.bench.sandbox)
     ├── PlannerError               a planner raised, timed out or returned a malformed action
     ├── MissingExtraError          a feature needs an optional dependency that is not installed
     └── StoreError                 the store could not do what was asked
          ├── StoreUnavailableError the database cannot be opened or reached
          │    ├── StoreCorruptError  the file is not a StateWise store (corrupt or foreign)
          │    ├── StoreLockedError   another writer held the lock past the timeout
          │    └── SchemaVersionError the store was written by a newer StateWise
          ├── RecordNotFoundError   no record with that id (also LookupError)
          ├── ConflictError         the write lost a race or would break an invariant
          │    ├── StaleVersionError        optimistic version check failed
          │    └── ActiveRecordExistsError  (key, scope) already has an active record
          └── TransitionError       the record's status does not allow that operation
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ActiveRecordExistsError",
    "ConflictError",
    "ContractError",
    "GroundingError",
    "ImportFormatError",
    "InputError",
    "InputTooLargeError",
    "KeyNameError",
    "MissingExtraError",
    "PlannerError",
    "RecordNotFoundError",
    "SchemaVersionError",
    "ScopeError",
    "StaleVersionError",
    "StateWiseError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreUnavailableError",
    "TransitionError",
    "UnknownPluginError",
    "ValueTypeError",
]


class StateWiseError(Exception):
    """Base class of every StateWise exception."""


class InputError(StateWiseError, ValueError):
    """Bad input from a person, a file or a caller."""


class ValueTypeError(InputError):
    """A value is not of the type its key declares."""

    def __init__(self, *, key: str, expected: str, got: Any) -> None:
        self.key = key
        self.expected = expected
        self.got = got
        super().__init__(f"{key}: expected {expected}, got {got!r} ({type(got).__name__})")


class ScopeError(InputError):
    """A scope string that does not parse."""

    ACCEPTED = (
        "global, user:<name>, workspace:<absolute path>, repo:<identity>, "
        "repo:<identity>@<branch>"
    )

    def __init__(self, text: str, problem: str) -> None:
        self.text = text
        self.problem = problem
        super().__init__(f"bad scope {text!r}: {problem}; accepted forms: {self.ACCEPTED}")


class KeyNameError(InputError):
    """A key that is malformed, or that the contract in force does not declare."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        self.problem = problem
        super().__init__(f"key {key!r}: {problem}")


class ContractError(InputError):
    """A contract that does not validate. ``source`` is the file, ``field`` the path in it."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {problem}")


class GroundingError(InputError):
    """Evidence that does not match the record it would correct (key, type or scope)."""

    def __init__(self, record_id: str, problem: str) -> None:
        self.record_id = record_id
        self.problem = problem
        super().__init__(f"evidence cannot correct record {record_id}: {problem}")


class ImportFormatError(InputError):
    """A malformed line in a JSON Lines import; nothing from that import was written."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        super().__init__(f"{source}:{line}: {problem} (nothing was imported)")


class UnknownPluginError(InputError):
    """No plugin of that kind has that name (see :mod:`statewise.registry`)."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = known
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(known) or '(none)'}")


class InputTooLargeError(InputError):
    """An input over its size cap (:mod:`statewise.limits`), refused before it was read or parsed.
    ``source`` is the file (or the stream), ``what`` the kind of input the cap is for."""

    def __init__(self, source: str, size: int, limit: int, what: str, *, unread: bool = True) -> None:
        self.source = source
        self.size = size
        self.limit = limit
        self.what = what
        self.problem = f"{size:,} bytes, over the limit of {limit:,} bytes for {what}"
        super().__init__(f"{source} is {self.problem}; it was not {'read' if unread else 'parsed'}")


class PlannerError(StateWiseError):
    """A planner could not produce a valid action. ``planner`` names it."""

    def __init__(self, planner: str, problem: str) -> None:
        self.planner = planner
        self.problem = problem
        super().__init__(f"planner {planner}: {problem}")


class MissingExtraError(StateWiseError):
    """A feature needs an optional dependency: ``extra`` names the extra that brings it."""

    #: Which extra brings each optional top-level module.
    EXTRAS: ClassVar[dict[str, str]] = {"psycopg": "postgres", "psycopg_pool": "postgres", "matplotlib": "report",
                                        "openai": "models", "anthropic": "models", "mcp": "mcp", "mcp_types": "mcp"}

    def __init__(self, feature: str, module: str) -> None:
        self.feature = feature
        self.module = module
        self.extra = self.EXTRAS.get(module, "all")
        super().__init__(f"{feature} needs {module}, which is not installed; install it with: "
                         f"pip install 'statewise[{self.extra}]'")

    @classmethod
    def of(cls, feature: str, error: ModuleNotFoundError) -> MissingExtraError | None:
        """The error for ``error`` when it is an optional module's absence, else None."""
        module = (error.name or "").partition(".")[0]
        return cls(feature, module) if module in cls.EXTRAS else None


class StoreError(StateWiseError):
    """The store could not do what was asked."""


class StoreUnavailableError(StoreError):
    """The database cannot be opened or reached."""

    def __init__(self, location: str, problem: str) -> None:
        self.location = location
        self.problem = problem
        super().__init__(f"store {location}: {problem}")


class StoreCorruptError(StoreUnavailableError):
    """The database is corrupt or belongs to something else; it is never re-initialised."""


class StoreLockedError(StoreUnavailableError):
    """Another writer held the lock for longer than the timeout."""


class SchemaVersionError(StoreUnavailableError):
    """The store's schema is newer than this version of StateWise understands."""


class RecordNotFoundError(StoreError, LookupError):
    """No record has this id."""

    def __init__(self, record_id: str) -> None:
        self.record_id = record_id
        super().__init__(f"no record with id {record_id!r}")


class ConflictError(StoreError):
    """The write lost a race or would break a store invariant; nothing was written."""


class StaleVersionError(ConflictError):
    """The record changed since it was read (optimistic concurrency check failed)."""

    def __init__(self, record_id: str, expected: int, actual: int | None, status: str | None) -> None:
        self.record_id = record_id
        self.expected = expected
        self.actual = actual
        self.status = status
        super().__init__(
            f"record {record_id} changed since it was read "
            f"(expected version {expected}, found version {actual}, status {status})"
        )


class ActiveRecordExistsError(ConflictError):
    """(key, scope) already has an active record; supersede it instead of adding another."""

    def __init__(self, key: str, scope: str, record_id: str) -> None:
        self.key = key
        self.scope = scope
        self.record_id = record_id
        super().__init__(
            f"{key} already has an active record in {scope} ({record_id}); "
            "supersede it (or pass replace) instead of adding a second one"
        )


class TransitionError(StoreError):
    """The record's status does not allow the operation (e.g. superseding a retracted record)."""

    def __init__(self, record_id: str, status: str, operation: str, hint: str = "") -> None:
        self.record_id = record_id
        self.status = status
        self.operation = operation
        message = f"cannot {operation} record {record_id}: it is {status}"
        super().__init__(f"{message}; {hint}" if hint else message)
