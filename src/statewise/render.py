"""Human rendering of records, retrievals and lineage for the terminal (rich)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from statewise.store.rows import RecordRow, RetrievalRows
from statewise.values import render_value

if TYPE_CHECKING:  # a view of rows (`record list`) never imports the models (pydantic)
    from statewise.records import Lineage, Link, Record, Retrieval

__all__ = ["lineage_view", "record_line", "record_table", "retrieval_view"]

#: By RecordStatus value (a RecordStatus is a str, and finds its own entry).
_STATUS_STYLE = {
    "active": "green",
    "superseded": "yellow",
    "expired": "magenta",
    "retracted": "red",
}


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


def record_line(record: Record | RecordRow, *, note: str = "", now: datetime | None = None) -> Text:
    """One record on one logical line: key = value, scope, status, source, ages, id."""
    now = now or datetime.now(UTC)
    row = _row(record)
    line = Text("  ")
    line.append(f"{row.key} = {render_value(row.value)}", style="bold")
    line.append(f"  [{row.scope}]  ")
    line.append(row.status, style=_STATUS_STYLE[row.status])
    line.append(f"  {row.source}:{row.actor}", style="dim")
    line.append(f"  observed {_age(row.observed_at, now)}, verified {_age(row.verified_at, now)}", style="dim")
    if note:
        line.append(f"  ({note})", style="yellow")
    line.append(f"  {row.id}", style="dim cyan")
    return line


def record_table(records: Iterable[Record | RecordRow], *, title: str | None = None,
                 note: dict[str, str] | None = None) -> Group:
    """Records, one per line under an optional title (readable at 80 columns)."""
    now = datetime.now(UTC)
    lines: list[Text] = [Text(title, style="underline")] if title else []
    rendered = [record_line(r, note=(note or {}).get(r.id, ""), now=now) for r in records]
    lines.extend(rendered or [Text("  (none)", style="dim")])
    return Group(*lines)


def retrieval_view(result: Retrieval | RetrievalRows) -> Group:
    """What applies to a task, then what was held back and why."""
    parts: list[RenderableType] = [record_table(result.records, title=f"Records that apply to {result.task}")]
    held = [(result.stale, "stale (past TTL)"), (result.shadowed, "shadowed by a more specific scope"),
            (result.near_misses, "near miss: does not apply here")]
    extra: list[tuple[Record | RecordRow, str]] = [(r, why) for records, why in held for r in records]
    if extra:
        parts.append(Text(""))
        parts.append(record_table([r for r, _ in extra], title="Held back", note={r.id: why for r, why in extra}))
    counts = ", ".join(f"{count} {name}" for name, count in result.held_back.items())
    parts.append(Text(f"{len(result.records)} applying; held back: {counts}", style="dim"))
    return Group(*parts)


def _link_label(link: Link) -> str:
    who = link.evidence.actor if link.evidence else link.actor
    why = link.reason or (link.evidence.detail if link.evidence else "")
    label = f"{link.kind.value} by {who}"
    if link.kind.value == "narrow":
        label += f" in {link.scope}"
    return f"{label}: {why}" if why else label


def lineage_view(lineage: Lineage) -> Group:
    """The lineage as a chain: each record, then the link that led from it."""
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
