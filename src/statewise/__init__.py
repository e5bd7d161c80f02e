"""StateWise: diagnose and repair a coding agent's persistent operational records before it acts."""

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

__version__ = "0.1.0"

__all__ = [
    "Authority",
    "Evidence",
    "Provenance",
    "Record",
    "RecordDraft",
    "RecordStatus",
    "Retrieval",
    "Scope",
    "ScopeLevel",
    "SourceKind",
    "StateWiseError",
    "TaskScope",
    "ValueType",
    "__version__",
]
