-- The processed primary key decides first delivery against duplicate.
CREATE TABLE IF NOT EXISTS {{prefix}}_processed (
    event_id       UUID        PRIMARY KEY,
    aggregate_type TEXT        NOT NULL,
    aggregate_id   TEXT        NOT NULL,
    event_type     TEXT        NOT NULL,
    seq            BIGINT,
    payload_hash   BYTEA       NOT NULL,
    processed_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS {{name}}_processed_at_idx ON {{prefix}}_processed (processed_at);
CREATE TABLE IF NOT EXISTS {{prefix}}_aggregates (
    aggregate_type TEXT        NOT NULL,
    aggregate_id   TEXT        NOT NULL,
    last_seq       BIGINT      NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (aggregate_type, aggregate_id)
);
CREATE INDEX IF NOT EXISTS {{name}}_aggregates_updated_idx ON {{prefix}}_aggregates (updated_at);
