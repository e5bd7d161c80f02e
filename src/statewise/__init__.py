"""StateWise: diagnose and repair a coding agent's persistent operational records before it acts.

The names below are imported on first use (PEP 562), so that a process which needs only a
part of the package (the hook's front door, above all) does not pay for pydantic and the
rest at start-up.
"""

from __future__ import annotations

from importlib import import_module

# Not typing.TYPE_CHECKING: importing typing costs the hook's front door ~10 ms, and type
# checkers treat a module constant of this name the same way.
TYPE_CHECKING = False

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "Authority": "statewise.records",
    "Evidence": "statewise.records",
    "Provenance": "statewise.records",
    "Record": "statewise.records",
    "RecordDraft": "statewise.records",
    "RecordStatus": "statewise.records",
    "Retrieval": "statewise.records",
    "Scope": "statewise.scopes",
    "ScopeLevel": "statewise.scopes",
    "SourceKind": "statewise.records",
    "StateWiseError": "statewise.errors",
    "TaskScope": "statewise.scopes",
    "ValueType": "statewise.values",
}

__all__ = [*sorted(_EXPORTS), "__version__"]

if TYPE_CHECKING:
    from statewise.errors import StateWiseError
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
