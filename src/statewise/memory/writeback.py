"""Write corrections back into the memory files, as the developer chose, with lineage.

When ``memory check`` finds a line defective and knows the correct value, the line can be
rewritten so the agent's next session reads the right thing. :func:`propose_edits` turns a
check report into :class:`Edit` proposals (a unified diff each); :func:`apply_edits` applies
them under the project's write-back policy:

* ``never``: nothing is written; the diffs are only shown;
* ``ask`` (the default): an edit is written only when the approval callback says yes;
* ``auto``: edits to the agent's own memory (Claude's auto memory) are written without
  asking; files the developer owns (AGENTS.md, CLAUDE.md, ...) still need approval: they
  are never edited silently.

The policy is ``[tool.statewise] memory-write-back`` in the workspace's ``pyproject.toml``.
Every written edit is recorded in the store as a ``memory.edit[<hash>]`` record that names
the repair it carries out; :func:`undo_reverted_edits` (run by every import) puts the old
line back when that repair was reverted, so reverting the repair reverts the edit.
"""

from __future__ import annotations

import enum
import json
import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

from statewise.memory.check import DEFECTIVE, CheckReport, Finding
from statewise.memory.edits import ACTOR, EDIT_KEY, Edit, EditResult, undo_reverted_edits, write_line
from statewise.memory.extract import line_digest
from statewise.memory.importer import is_memory_record
from statewise.records import Authority, Provenance, RecordDraft, SourceKind
from statewise.store.base import Store
from statewise.values import ValueType, render_value

__all__ = [
    "EDIT_KEY",
    "Edit",
    "EditResult",
    "WriteBackPolicy",
    "apply_edits",
    "propose_edits",
    "read_policy",
    "undo_reverted_edits",
]

class WriteBackPolicy(str, enum.Enum):
    """What the developer lets StateWise do with a correction to a memory file."""

    NEVER = "never"
    ASK = "ask"
    AUTO = "auto"


def read_policy(workspace: str | Path) -> WriteBackPolicy:
    """The workspace's policy: ``[tool.statewise] memory-write-back`` in ``pyproject.toml``
    (default ``ask``). A value that is not a policy name is an error, never a guess."""
    path = Path(workspace) / "pyproject.toml"
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return WriteBackPolicy.ASK
    value = document.get("tool", {}).get("statewise", {}).get("memory-write-back", WriteBackPolicy.ASK.value)
    try:
        return WriteBackPolicy(value)
    except ValueError:
        raise ValueError(
            f"{path}: [tool.statewise] memory-write-back must be never, ask or auto, not {value!r}") from None


def _replacement(finding: Finding) -> tuple[str, str] | None:
    """The text in the line that states the claim, and what should stand there instead: only
    from evidence (a renamed path, an observed correct command), never a version."""
    if finding.fix is not None:
        old, new = finding.fix
        return (old, new) if finding.text.count(old) == 1 and old != new else None
    if finding.key.startswith("runtime.") and finding.key.endswith("_version"):
        return None  # a version a line states is the project's, not this machine's
    if finding.correct is None or isinstance(finding.correct, bool) or isinstance(finding.claimed, bool):
        return None  # a sentence ("never push to main") is not rewritten mechanically
    claimed, correct = render_value(finding.claimed), render_value(finding.correct)
    if (isinstance(finding.claimed, str) and isinstance(finding.correct, str)
            and re.fullmatch(r"v?\d+(\.\d+)*", claimed)):
        # keep a version as specific as the line had it: "3.8" becomes "3.11", not "3.11.7"
        parts = finding.correct.removeprefix("v").split(".")
        correct = ".".join(parts[: len(claimed.removeprefix("v").split("."))])
    if finding.text.count(claimed) != 1 or claimed == correct:
        return None  # ambiguous or nothing to change: never guess which occurrence is meant
    return claimed, correct


def propose_edits(report: CheckReport) -> list[Edit]:
    """One edit per defective line whose correct value can replace the claim's text."""
    edits: list[Edit] = []
    seen: set[tuple[str, int]] = set()  # by the real file: a CLAUDE.md symlink to AGENTS.md is one file
    for finding in report.findings:
        if finding.status != DEFECTIVE or (str(finding.file.path.resolve()), finding.line) in seen:
            continue
        replacement = _replacement(finding)
        if replacement is None:
            continue
        old_text, new_text = replacement
        seen.add((str(finding.file.path.resolve()), finding.line))
        edits.append(Edit(file=finding.file, line=finding.line, old=finding.text,
                          new=finding.text.replace(old_text, new_text, 1), key=finding.key, scope=finding.scope,
                          claimed=finding.claimed, correct=finding.correct))
    return edits


def apply_edits(
    edits: Sequence[Edit],
    policy: WriteBackPolicy,
    *,
    store: Store | None = None,
    approve: Callable[[Edit], bool] | None = None,
) -> list[EditResult]:
    """Apply ``edits`` as ``policy`` allows (see the module docstring).

    ``approve`` is asked for every edit that needs approval (None: nobody to ask, so those
    are not written). With ``store``, each written edit is recorded with the repair it
    carries out (the active corrected record of its key and scope).
    """
    results: list[EditResult] = []
    for edit in edits:
        if policy is WriteBackPolicy.NEVER:
            results.append(EditResult(edit, False, "the project's write-back policy is never"))
            continue
        silent = policy is WriteBackPolicy.AUTO and edit.owned_by_agent
        if not silent:
            if approve is None or not approve(edit):
                why = "the developer's file is never edited without approval" if not edit.owned_by_agent else (
                    "the policy asks first")
                results.append(EditResult(edit, False, f"not approved: {why}"))
                continue
        if not write_line(edit.file.path, edit.line, edit.old, edit.new):
            results.append(EditResult(edit, False, "the line changed since it was checked"))
            continue
        record_id = _record_edit(store, edit, approved=not silent) if store is not None else None
        results.append(EditResult(edit, True, "applied automatically" if silent else "applied with approval",
                                  record_id))
    return results


def _record_edit(store: Store, edit: Edit, *, approved: bool) -> str | None:
    active = store.get_active(edit.key, edit.scope)
    # The repair is the correction now in force; a line's own imported record is none.
    repair = active if active is not None and not is_memory_record(active) else None
    payload = {"path": str(edit.file.path), "line": edit.line, "old": edit.old, "new": edit.new,
               "repair": repair.id if repair is not None else None}
    draft = RecordDraft(
        key=f"{EDIT_KEY}[{line_digest(edit.new)}]", value=json.dumps(payload, sort_keys=True), scope=edit.scope,
        value_type=ValueType.STRING,
        # Who decided the edit: the developer who approved it, or the policy letting the agent
        # correct its own memory.
        provenance=Provenance(source=SourceKind.TOOL_OUTPUT,
                              authority=Authority.DEVELOPER if approved else Authority.AGENT, actor=ACTOR,
                              reference=repair.id if repair is not None else None))
    return store.put(draft, replace=True, reason=f"wrote the correction into {edit.file.relpath}:{edit.line}").id
