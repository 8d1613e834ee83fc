-- jitoutbox outbox schema for PostgreSQL. JSON payloads (content type
-- application/json, valid UTF-8 JSON) are stored in payload_json (type json
-- keeps the exact text), all others in payload; exactly one is non-null.
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
-- fillfactor 50: half of each page stays free, so that the lease a claim
-- writes (locked_by, locked_until: no index covers them) is a HOT update,
-- a new row version on the same page with no new index entries, instead of
-- a new version plus an entry in each of the four indexes: a claim on a
-- large backlog costs about half as much, and the table takes twice the
-- pages (figures: bench/results/*-pg-claim-tuning.md). An
-- existing table keeps its fillfactor; ALTER TABLE ... SET (fillfactor = 50)
-- applies it to pages written from then on.
CREATE INDEX IF NOT EXISTS {{name}}_claim_idx ON {{table}} (seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_aggregate_idx ON {{table}} (aggregate_type, aggregate_id, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_cleanup_idx ON {{table}} (published_at) WHERE state = 1;
CREATE TABLE IF NOT EXISTS {{table}}_locks (
    name         TEXT PRIMARY KEY,
    owner        TEXT,
    locked_until TIMESTAMPTZ
);
-- The leased relay's claim functions, its 'claim' row in {{table}}_locks
-- and its three-argument {{table}}_mark are left out: migration 002 drops
-- them from a table the leased relay made (testdata/001_outbox_leased.sql
-- is that table), and nothing calls them.
