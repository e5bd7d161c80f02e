"""What an agent is told when a session begins: the repaired state, within a token budget.

:func:`session_context` imports the workspace's memory files (idempotently), checks them
against the live workspace, and returns two things, most important first:

1. the memory-file lines known to be wrong, each with its correction;
2. the facts verified in this check (the memory check's confirmations and corrections, and
   whatever else was verified since ``checked_since``);
3. the other facts on record for the workspace's scope, each with its source and age and
   named as not re-checked this session: a value observed days ago may no longer hold, and
   the note must not present it as a fact the session confirmed (issue 23).

The text never exceeds ``token_budget`` tokens as :func:`estimate_tokens` counts them
(docs/memory.md says how the estimate was measured); what does not fit is summarized in one
closing line that names the command showing everything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from statewise.contract import Contract, builtin_contract
from statewise.memory.check import DEFECTIVE, check_memory
from statewise.memory.importer import import_memory, known_wrong
from statewise.records import Record, SourceKind, base_key, utcnow
from statewise.store import default_location, open_store
from statewise.values import render_value
from statewise.workspace import derive_task_scope

__all__ = ["DEFAULT_TOKEN_BUDGET", "age_text", "estimate_tokens", "on_record_text", "session_context"]

#: The default budget: about 2% of a 32k-token prompt, enough for ~15 lines.
DEFAULT_TOKEN_BUDGET = 400
_BYTES_PER_TOKEN = 3  # conservative: BPE tokenizers average ~4 bytes per token on English and code
_MAX_ITEM_CHARS = 240


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens ``text`` costs: its UTF-8 bytes divided by 3, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / _BYTES_PER_TOKEN)


def _clip(text: str, limit: int = _MAX_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fits(lines: list[str], budget: int) -> bool:
    return estimate_tokens("\n".join(lines)) <= budget


def age_text(when: datetime, now: datetime) -> str:
    """How long ago ``when`` was, in the largest whole unit: "3 d ago", "2 h ago", "just now"."""
    seconds = max(0, int((now - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


#: How each source's value came to be on record, as the note says it.
_SOURCE_VERB = {
    SourceKind.OBSERVATION: "observed",
    SourceKind.TOOL_OUTPUT: "read from a tool's output",
    SourceKind.DEVELOPER: "stated by the developer",
    SourceKind.AGENT_INFERENCE: "inferred by an agent",
    SourceKind.IMPORT: "imported",
}


def on_record_text(record: Record, now: datetime) -> str:
    """Where a record's value comes from and how old it is ("observed 3 d ago", "verified 2 h
    ago", "stated by the developer 5 d ago"): what a reader needs to weigh a value that was not
    re-checked now."""
    verified = record.time.verified_at
    if verified is not None and verified > record.time.observed_at:
        return f"verified {age_text(verified, now)}"
    return f"{_SOURCE_VERB[record.provenance.source]} {age_text(record.time.observed_at, now)}"


def session_context(
    workspace: str | Path,
    store_location: str | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    *,
    contract: Contract | None = None,
    home: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    check: bool = True,
    checked_since: datetime | None = None,
) -> str:
    """The repaired state for a session starting in ``workspace``, as compact text.

    Imports the memory files into the store at ``store_location`` (default: the project's
    store), checks them (``check=False`` skips the live verification and reports only what
    the store already knows), and renders the wrong lines with their corrections, the facts
    verified since ``checked_since`` (default: the start of this call; a caller that verified
    records just before, as the SessionStart hook's prompt check does, passes the time it
    started), and the other facts on record with their source and age, within
    ``token_budget``. Returns an empty string when there is nothing to say.
    """
    if token_budget < 1:
        raise ValueError("token_budget must be at least 1")
    started = checked_since or utcnow()
    workspace = Path(workspace).resolve()
    contract = contract or builtin_contract()
    with open_store(store_location or default_location(workspace), key_schema=contract) as store:
        imported = import_memory(workspace, store, contract, home=home)
        wrong: dict[tuple[str, int, str], str] = {}
        if check:
            report = check_memory(workspace, contract, store=store, files=imported.files, environ=environ)
            for finding in report.with_status(DEFECTIVE):
                why = "; ".join(f"{c.key} is {'absent' if c.observed is None else render_value(c.observed)}"
                                for c in finding.checks if c.status == DEFECTIVE)
                # A bool correction (a path exists: false) is already said by the reason.
                fix = (f" Use: {render_value(finding.correct)}"
                       if finding.correct is not None and not isinstance(finding.correct, bool) else "")
                wrong[(str(finding.file.path), finding.line, finding.key)] = (
                    f"{finding.file.relpath}:{finding.line} \"{_clip(finding.text, 100)}\" is wrong: {why}.{fix}")
        for line in imported.lines:
            for fact in line.facts:
                slot = (str(line.file.path), line.number, fact.key)
                if slot in wrong:
                    continue
                corrected = known_wrong(store, fact.key, fact.scope, line.digest, fact.value)
                if corrected is not None:
                    fix = (f" Use: {render_value(corrected.value)}"
                           if corrected.key == fact.key and not isinstance(corrected.value, bool) else "")
                    wrong[slot] = (f"{line.file.relpath}:{line.number} \"{_clip(line.text, 100)}\" is wrong: "
                                   f"{fact.key} is not {render_value(fact.value)}.{fix}")
        task = derive_task_scope(workspace)
        note_key = contract.memory.note_key
        retrieval = store.retrieve(task)
        facts = [r for r in retrieval.records if _on_record(r) and base_key(r.key) != note_key]
    return _render(list(wrong.values()), facts, started, token_budget)


def _on_record(record: Record) -> bool:
    return record.time.verified_at is not None or record.provenance.source is SourceKind.OBSERVATION


def _verified_since(record: Record, since: datetime) -> bool:
    return record.time.verified_at is not None and record.time.verified_at >= since


def _render(wrong: list[str], facts: list[Record], since: datetime, budget: int) -> str:
    if not wrong and not facts:
        return ""
    now = utcnow()
    ordered = sorted(facts, key=lambda r: r.key)
    items: list[tuple[str, str]] = [("wrong", f"- {item}") for item in wrong]
    items += [("now", f"- {_clip(f'{r.key} = {render_value(r.value)}')}")
              for r in ordered if _verified_since(r, since)]
    # The age and source come after the value in parentheses, never as "(was ...", which
    # would read as a correction.
    items += [("record", f"- {_clip(f'{r.key} = {render_value(r.value)}')} ({on_record_text(r, now)})")
              for r in ordered if not _verified_since(r, since)]
    # The agent knows where it runs; every byte of the header is paid each session.
    header = "StateWise checked your memory files against this workspace."
    sections = {"wrong": "WRONG lines (do not act on them; use the correction):",
                "now": "Verified in this check:",
                "record": "On record, NOT re-checked this session (may be out of date):"}
    out = [header]
    if not _fits(out, budget):
        return ""
    current = None
    for index, (section, text) in enumerate(items):
        candidate = out + ([sections[section]] if section != current else []) + [text]
        left = len(items) - index - 1
        trailer = [f"(+{left} more: run `statewise memory check`)"] if left else []
        if _fits(candidate + trailer, budget):
            out, current = candidate, section
            continue
        dropped = len(items) - index
        tail = f"(+{dropped} more: run `statewise memory check`)"
        if _fits(out + [tail], budget):
            out.append(tail)
        break
    return "\n".join(out)
