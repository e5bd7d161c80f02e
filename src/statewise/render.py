"""Human rendering of records, retrievals and lineage for the terminal (rich).

A record's line and a retrieval's view are composed once, as lines of (text, style) pieces
(:func:`retrieval_lines`); :func:`retrieval_view` makes them rich ``Text`` for a terminal, and
:func:`retrieval_plain` joins them into the exact text rich prints to a pipe, without importing
rich (``statewise record list``'s front door, docs/performance-cli.md). rich alters a few
characters while it renders (tabs, some control codes): for a view holding one of them,
:func:`retrieval_plain` answers None and the caller renders with rich.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from statewise.store.rows import RecordRow, RetrievalRows
from statewise.values import render_value

if TYPE_CHECKING:  # a view of rows (`record list`) never imports the models (pydantic), nor rich for a pipe
    from rich.console import Group
    from rich.text import Text

    from statewise.records import Lineage, Link, Record, Retrieval

__all__ = ["lineage_view", "record_line", "record_table", "retrieval_lines", "retrieval_plain", "retrieval_view"]

#: By RecordStatus value (a RecordStatus is a str, and finds its own entry).
_STATUS_STYLE = {
    "active": "green",
    "superseded": "yellow",
    "expired": "magenta",
    "retracted": "red",
}

#: One line of a view: its pieces of text, each with its rich style (None: unstyled).
Line = list[tuple[str, str | None]]

#: What rich changes in the text it renders: a tab is expanded to the next tab stop, and the
#: control codes BEL, BS, VT, FF and CR are removed (rich.control.STRIP_CONTROL_CODES).
RICH_ALTERS = frozenset("\t\x07\x08\x0b\x0c\r")


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def _age(value: datetime | None, now: datetime) -> str:
    if value is None:
        return "never"
    seconds = max(0, int((now - value).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def _row(record: Record | RecordRow) -> RecordRow:
    return record if isinstance(record, RecordRow) else RecordRow.from_record(record)


def _record_pieces(record: Record | RecordRow, note: str, now: datetime) -> Line:
    row = _row(record)
    pieces: Line = [("  ", None), (f"{row.key} = {render_value(row.value)}", "bold"), (f"  [{row.scope}]  ", None),
                    (row.status, _STATUS_STYLE[row.status]), (f"  {row.source}:{row.actor}", "dim"),
                    (f"  observed {_age(row.observed_at, now)}, verified {_age(row.verified_at, now)}", "dim")]
    if note:
        pieces.append((f"  ({note})", "yellow"))
    pieces.append((f"  {row.id}", "dim cyan"))
    return pieces


def _table_lines(records: Iterable[Record | RecordRow], title: str | None, note: dict[str, str] | None,
                 now: datetime) -> list[Line]:
    lines: list[Line] = [[(title, "underline")]] if title else []
    rendered = [_record_pieces(r, (note or {}).get(r.id, ""), now) for r in records]
    lines.extend(rendered or [[("  (none)", "dim")]])
    return lines


def _text(line: Line) -> Text:
    from rich.text import Text

    # The first piece is the Text's own (with its style), the rest are appended: as the view was
    # always built, so that a terminal gets the same escape codes as before.
    first, style = line[0] if line else ("", None)
    text = Text(first, style=style or "")
    for piece, piece_style in line[1:]:
        text.append(piece, style=piece_style)
    return text


def _group(lines: list[Line]) -> Group:
    from rich.console import Group

    return Group(*(_text(line) for line in lines))


def record_line(record: Record | RecordRow, *, note: str = "", now: datetime | None = None) -> Text:
    """One record on one logical line: key = value, scope, status, source, ages, id."""
    return _text(_record_pieces(record, note, now or datetime.now(UTC)))


def record_table(records: Iterable[Record | RecordRow], *, title: str | None = None,
                 note: dict[str, str] | None = None) -> Group:
    """Records, one per line under an optional title (readable at 80 columns)."""
    return _group(_table_lines(records, title, note, datetime.now(UTC)))


def retrieval_lines(result: Retrieval | RetrievalRows, now: datetime | None = None) -> list[Line]:
    """What applies to a task, then what was held back and why, as lines of styled pieces."""
    now = now or datetime.now(UTC)
    lines = _table_lines(result.records, f"Records that apply to {result.task}", None, now)
    held = [(result.stale, "stale (past TTL)"), (result.shadowed, "shadowed by a more specific scope"),
            (result.near_misses, "near miss: does not apply here")]
    extra: list[tuple[Record | RecordRow, str]] = [(r, why) for records, why in held for r in records]
    if extra:
        lines.append([])
        lines.extend(_table_lines([r for r, _ in extra], "Held back", {r.id: why for r, why in extra}, now))
    counts = ", ".join(f"{count} {name}" for name, count in result.held_back.items())
    lines.append([(f"{len(result.records)} applying; held back: {counts}", "dim")])
    return lines


def retrieval_view(result: Retrieval | RetrievalRows, now: datetime | None = None) -> Group:
    """What applies to a task, then what was held back and why."""
    return _group(retrieval_lines(result, now))


def retrieval_plain(result: Retrieval | RetrievalRows, now: datetime | None = None) -> str | None:
    """The text rich prints for :func:`retrieval_view` to a console that is not a terminal
    (soft-wrapped, so never cut or wrapped), without importing rich; None when a piece holds
    a character rich would alter (:data:`RICH_ALTERS`). ``tests/test_render_plain.py`` holds
    the two to the same output for generated records."""
    text = "".join("".join(piece for piece, _ in line) + "\n" for line in retrieval_lines(result, now))
    return None if not RICH_ALTERS.isdisjoint(text) else text


def _link_label(link: Link) -> str:
    who = link.evidence.actor if link.evidence else link.actor
    why = link.reason or (link.evidence.detail if link.evidence else "")
    label = f"{link.kind.value} by {who}"
    if link.kind.value == "narrow":
        label += f" in {link.scope}"
    return f"{label}: {why}" if why else label


def lineage_view(lineage: Lineage) -> Group:
    """The lineage as a chain: each record, then the link that led from it."""
    from rich.console import Group
    from rich.text import Text

    by_id = {record.id: record for record in lineage.records}
    outgoing: dict[str, list[Link]] = {}
    for link in lineage.links:
        outgoing.setdefault(link.from_record, []).append(link)
    lines: list[Text] = []
    for record in lineage.records:
        marker = "*" if record.id == lineage.record_id else " "
        line = Text(f"{marker} {record.id}  ")
        line.append(f"{record.key} = {render_value(record.value)}", style="bold")
        line.append(f"  [{record.scope}]  ")
        line.append(record.status.value, style=_STATUS_STYLE[record.status])
        line.append(f"  ({record.provenance.source.value}:{record.provenance.actor}, {_when(record.time.recorded_at)})",
                    style="dim")
        lines.append(line)
        for link in outgoing.get(record.id, []):
            target = by_id.get(link.to_record or "")
            arrow = f"    └─ {_link_label(link)}"
            if link.to_record and link.to_record != record.id:
                arrow += f" → {link.to_record}"
            elif target is None and link.to_record is None:
                arrow += " (no successor)"
            lines.append(Text(arrow, style="cyan"))
    return Group(*lines)
