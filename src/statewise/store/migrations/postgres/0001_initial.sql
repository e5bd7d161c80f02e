-- Records are append-only: a correction inserts a new row and changes only the old row's
-- status, superseded_by, version and timestamps. Values are never updated in place.
-- Text columns used in prefix ranges are COLLATE "C" so byte order equals index order.
CREATE TABLE sw_records (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    key TEXT COLLATE "C" NOT NULL,
    scope TEXT COLLATE "C" NOT NULL,
    value_type TEXT NOT NULL,
    value_json JSONB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'expired', 'retracted')),
    observed_at TIMESTAMPTZ NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    verified_at TIMESTAMPTZ,
    ttl_seconds INTEGER,
    source TEXT NOT NULL,
    authority TEXT NOT NULL,
    actor TEXT NOT NULL,
    reference TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    version INTEGER NOT NULL,
    status_reason TEXT,
    status_changed_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX sw_records_one_active ON sw_records (key, scope) WHERE status = 'active';
CREATE INDEX sw_records_active_scope ON sw_records (scope, key) WHERE status = 'active';
CREATE INDEX sw_records_active_key ON sw_records (key) WHERE status = 'active';
CREATE INDEX sw_records_history ON sw_records (key, scope, seq);

CREATE TABLE sw_links (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    from_record TEXT NOT NULL,
    to_record TEXT,
    scope TEXT NOT NULL,
    evidence_json JSONB,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sw_links_from ON sw_links (from_record);
CREATE INDEX sw_links_to ON sw_links (to_record);
