"""StateWise: diagnose and repair a coding agent's persistent operational records before it acts.

This is the public API: the ``StateWise`` facade, the ``Guard`` and its ``GuardConfig``,
``open_store``, the record and action types, ``Contract`` and ``load_contract``, and every
error (all ``StateWiseError``; the tree is drawn in :mod:`statewise.errors`)::

    from statewise import StateWise, StateWiseError

The names are imported on first use (PEP 562), so that a process which needs only a part of
the package (the hook's front door, above all) does not pay for pydantic and the rest at
start-up. ``tests/test_public_api.py`` pins ``__all__``.
"""

from __future__ import annotations

from importlib import import_module

# Not typing.TYPE_CHECKING: importing typing costs the hook's front door ~10 ms, and type
# checkers treat a module constant of this name the same way.
TYPE_CHECKING = False

__version__ = "0.1.0"

#: Public name -> the module that defines it. Grouped by layer: the facade and the guard,
#: the store, the data types, and the errors (every one a StateWiseError; see statewise.errors).
_EXPORTS = {
    "StateWise": "statewise.api",
    "Guard": "statewise.pipeline.guard",
    "GuardConfig": "statewise.pipeline.guard",
    "Decision": "statewise.pipeline.report",
    "Verdict": "statewise.pipeline.report",
    "Task": "statewise.planners.base",
    "open_store": "statewise.store",
    "Store": "statewise.store.base",
    "Action": "statewise.actions",
    "Contract": "statewise.contract",
    "load_contract": "statewise.contract",
    "Authority": "statewise.records",
    "Evidence": "statewise.records",
    "Provenance": "statewise.records",
    "Record": "statewise.records",
    "RecordDraft": "statewise.records",
    "RecordStatus": "statewise.records",
    "Retrieval": "statewise.records",
    "SourceKind": "statewise.records",
    "Scope": "statewise.scopes",
    "ScopeLevel": "statewise.scopes",
    "TaskScope": "statewise.scopes",
    "ValueType": "statewise.values",
    "ActiveRecordExistsError": "statewise.errors",
    "ConflictError": "statewise.errors",
    "ContractError": "statewise.errors",
    "GroundingError": "statewise.errors",
    "ImportFormatError": "statewise.errors",
    "InputError": "statewise.errors",
    "InputTooLargeError": "statewise.errors",
    "KeyNameError": "statewise.errors",
    "MissingExtraError": "statewise.errors",
    "PlannerError": "statewise.errors",
    "RecordNotFoundError": "statewise.errors",
    "SchemaVersionError": "statewise.errors",
    "ScopeError": "statewise.errors",
    "StaleVersionError": "statewise.errors",
    "StateWiseError": "statewise.errors",
    "StoreCorruptError": "statewise.errors",
    "StoreError": "statewise.errors",
    "StoreLockedError": "statewise.errors",
    "StoreUnavailableError": "statewise.errors",
    "TransitionError": "statewise.errors",
    "UnknownPluginError": "statewise.errors",
    "ValueTypeError": "statewise.errors",
}

__all__ = [*sorted(_EXPORTS), "__version__"]

if TYPE_CHECKING:
    from statewise.actions import Action
    from statewise.api import StateWise
    from statewise.contract import Contract, load_contract
    from statewise.errors import (
        ActiveRecordExistsError,
        ConflictError,
        ContractError,
        GroundingError,
        ImportFormatError,
        InputError,
        InputTooLargeError,
        KeyNameError,
        MissingExtraError,
        PlannerError,
        RecordNotFoundError,
        SchemaVersionError,
        ScopeError,
        StaleVersionError,
        StateWiseError,
        StoreCorruptError,
        StoreError,
        StoreLockedError,
        StoreUnavailableError,
        TransitionError,
        UnknownPluginError,
        ValueTypeError,
    )
    from statewise.pipeline.guard import Guard, GuardConfig
    from statewise.pipeline.report import Decision, Verdict
    from statewise.planners.base import Task
    from statewise.records import (
        Authority,
        Evidence,
        Provenance,
        Record,
        RecordDraft,
        RecordStatus,
        Retrieval,
        SourceKind,
    )
    from statewise.scopes import Scope, ScopeLevel, TaskScope
    from statewise.store import open_store
    from statewise.store.base import Store
    from statewise.values import ValueType


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'statewise' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
