-- Records are append-only: a correction inserts a new row and changes only the old row's
-- status, superseded_by, version and timestamps. Values are never updated in place.
CREATE TABLE sw_records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    key TEXT NOT NULL,
    scope TEXT NOT NULL,
    value_type TEXT NOT NULL,
    value_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'expired', 'retracted')),
    observed_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    verified_at TEXT,
    ttl_seconds INTEGER,
    source TEXT NOT NULL,
    authority TEXT NOT NULL,
    actor TEXT NOT NULL,
    reference TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    version INTEGER NOT NULL,
    status_reason TEXT,
    status_changed_at TEXT
);
-- At most one active record per (key, scope), enforced by the database itself.
CREATE UNIQUE INDEX sw_records_one_active ON sw_records (key, scope) WHERE status = 'active';
-- Retrieval: active records whose scope is one of the task's applicable scopes.
CREATE INDEX sw_records_active_scope ON sw_records (scope, key) WHERE status = 'active';
CREATE INDEX sw_records_active_key ON sw_records (key) WHERE status = 'active';
-- History of one (key, scope) in order.
CREATE INDEX sw_records_history ON sw_records (key, scope, seq);

CREATE TABLE sw_links (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    from_record TEXT NOT NULL,
    to_record TEXT,
    scope TEXT NOT NULL,
    evidence_json TEXT,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX sw_links_from ON sw_links (from_record);
CREATE INDEX sw_links_to ON sw_links (to_record);
