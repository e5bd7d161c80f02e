"""The agents' own memory: CLAUDE.md, AGENTS.md, GEMINI.md, Cursor rules and auto memory.

* :mod:`~statewise.memory.discovery` lists the files each agent loads, with authority and scope;
* :mod:`~statewise.memory.extract` types their lines with the contract's ``memory:`` rules;
* :mod:`~statewise.memory.importer` writes them into the store, idempotently, with lineage;
* :mod:`~statewise.memory.check` verifies every fact against the live workspace;
* :mod:`~statewise.memory.context` renders the repaired state for a starting session;
* :mod:`~statewise.memory.writeback` writes corrections back into the files, as the developer chose.

See docs/memory.md.
"""

from __future__ import annotations

from statewise.memory.check import CheckReport, Finding, check_memory, render_human, to_json, to_sarif
from statewise.memory.context import DEFAULT_TOKEN_BUDGET, estimate_tokens, session_context
from statewise.memory.discovery import MemoryFile, claude_project_folder, discover_memory_files
from statewise.memory.extract import MemoryFact, MemoryLine, extract_file, extract_text, line_digest
from statewise.memory.importer import ImportItem, ImportReport, import_memory, known_wrong, parse_reference
from statewise.memory.writeback import (
    Edit,
    EditResult,
    WriteBackPolicy,
    apply_edits,
    propose_edits,
    read_policy,
    undo_reverted_edits,
)

__all__ = [
    "DEFAULT_TOKEN_BUDGET",
    "CheckReport",
    "Edit",
    "EditResult",
    "Finding",
    "ImportItem",
    "ImportReport",
    "MemoryFact",
    "MemoryFile",
    "MemoryLine",
    "WriteBackPolicy",
    "apply_edits",
    "check_memory",
    "claude_project_folder",
    "discover_memory_files",
    "estimate_tokens",
    "extract_file",
    "extract_text",
    "import_memory",
    "known_wrong",
    "line_digest",
    "parse_reference",
    "propose_edits",
    "read_policy",
    "render_human",
    "session_context",
    "to_json",
    "to_sarif",
    "undo_reverted_edits",
]
