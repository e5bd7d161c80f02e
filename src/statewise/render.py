"""Human rendering of records, retrievals and lineage for the terminal (rich)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from statewise.records import Lineage, Link, Record, RecordStatus, Retrieval
from statewise.values import render_value

__all__ = ["lineage_view", "record_table", "retrieval_view"]

_STATUS_STYLE = {
    RecordStatus.ACTIVE: "green",
    RecordStatus.SUPERSEDED: "yellow",
    RecordStatus.EXPIRED: "magenta",
    RecordStatus.RETRACTED: "red",
}


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def record_table(records: Iterable[Record], *, title: str | None = None, note: dict[str, str] | None = None) -> Table:
    """A table of records: id, key, value, scope, status, source and times."""
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for column in ("id", "key", "value", "scope", "status", "source", "observed", "verified"):
        table.add_column(column, overflow="fold")
    if note:
        table.add_column("note")
    for record in records:
        row = [
            record.id,
            record.key,
            render_value(record.value),
            record.scope,
            Text(record.status.value, style=_STATUS_STYLE[record.status]),
            f"{record.provenance.source.value}:{record.provenance.actor}",
            _when(record.time.observed_at),
            _when(record.time.verified_at),
        ]
        if note:
            row.append(note.get(record.id, ""))
        table.add_row(*row)
    return table


def retrieval_view(result: Retrieval) -> Group:
    """What applies to a task, then what was held back and why."""
    parts: list = [record_table(result.records, title=f"Records that apply to {result.task}")]
    held = [(result.stale, "stale (past TTL)"), (result.shadowed, "shadowed by a more specific scope"),
            (result.near_misses, "near miss: does not apply here")]
    extra = [(r, why) for records, why in held for r in records]
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


def print_to(console: Console, renderable) -> None:
    console.print(renderable)
