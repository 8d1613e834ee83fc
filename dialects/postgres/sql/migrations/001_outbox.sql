-- JSON payloads go in payload_json (type json keeps the exact text), all
-- others in payload.
CREATE TABLE IF NOT EXISTS {{table}} (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              UUID        NOT NULL UNIQUE,
    aggregate_type  TEXT        NOT NULL,
    aggregate_id    TEXT        NOT NULL,
    event_type      TEXT        NOT NULL,
    payload         BYTEA,
    payload_json    JSON,
    content_type    TEXT        NOT NULL DEFAULT '',
    headers         JSON,
    idempotency_key TEXT,
    critical        BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at      TIMESTAMPTZ NOT NULL,
    state           SMALLINT    NOT NULL DEFAULT 0,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    locked_by       TEXT,
    locked_until    TIMESTAMPTZ,
    last_error      TEXT,
    published_at    TIMESTAMPTZ,
    CONSTRAINT {{name}}_one_payload CHECK ((payload IS NULL) <> (payload_json IS NULL))
) WITH (fillfactor = 50);
-- fillfactor 50: room on each page keeps updates of unindexed columns HOT
-- (no new index entries), such as a retry's failure update (state stays 0).
-- An existing table keeps its fillfactor.
CREATE INDEX IF NOT EXISTS {{name}}_claim_idx ON {{table}} (seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_aggregate_idx ON {{table}} (aggregate_type, aggregate_id, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_cleanup_idx ON {{table}} (published_at) WHERE state = 1;
CREATE TABLE IF NOT EXISTS {{table}}_locks (
    name         TEXT PRIMARY KEY,
    owner        TEXT,
    locked_until TIMESTAMPTZ
);
-- The leased relay's claim functions and 'claim' lock row are not created:
-- migration 002 drops them from tables that have them.
