"""The SQL backends' column lists and insert statements, shared by the store and its write paths."""

from __future__ import annotations

__all__ = ["ACTIVE", "INSERT_LINK", "INSERT_RECORD", "LINK_COLUMNS", "RECORD_COLUMNS"]

RECORD_COLUMNS = (
    "id, key, scope, value_type, value_json, status, observed_at, recorded_at, verified_at, "
    "ttl_seconds, source, authority, actor, reference, supersedes, superseded_by, version, "
    "status_reason, status_changed_at"
)
LINK_COLUMNS = "id, kind, from_record, to_record, scope, evidence_json, reason, actor, created_at"

#: RecordStatus.ACTIVE as stored (the models are imported by the writes only).
ACTIVE = "active"
INSERT_RECORD = f"INSERT INTO sw_records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * 19)})"
INSERT_LINK = f"INSERT INTO sw_links ({LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
