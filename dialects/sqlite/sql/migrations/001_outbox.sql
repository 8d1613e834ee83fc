-- Times are INTEGER unix microseconds (UTC), which compare as numbers.
-- AUTOINCREMENT: a seq is never reused after rows are deleted.
CREATE TABLE IF NOT EXISTS {{table}} (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    aggregate_type  TEXT    NOT NULL,
    aggregate_id    TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    payload         BLOB,
    content_type    TEXT    NOT NULL DEFAULT '',
    headers         TEXT,
    idempotency_key TEXT,
    critical        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    state           INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    locked_by       TEXT,
    locked_until    INTEGER,
    last_error      TEXT,
    published_at    INTEGER
);
CREATE INDEX IF NOT EXISTS {{name}}_claim_idx ON {{table}} (seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_aggregate_idx ON {{table}} (aggregate_type, aggregate_id, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_cleanup_idx ON {{table}} (published_at) WHERE state = 1;
CREATE TABLE IF NOT EXISTS {{table}}_locks (
    name         TEXT PRIMARY KEY,
    owner        TEXT,
    locked_until INTEGER
);
INSERT OR IGNORE INTO {{table}}_locks (name) VALUES ('claim');
