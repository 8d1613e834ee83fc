-- Times are INTEGER unix microseconds. The processed primary key decides
-- first delivery against duplicate.
CREATE TABLE IF NOT EXISTS {{prefix}}_processed (
    event_id       TEXT    PRIMARY KEY,
    aggregate_type TEXT    NOT NULL,
    aggregate_id   TEXT    NOT NULL,
    event_type     TEXT    NOT NULL,
    seq            INTEGER,
    payload_hash   BLOB    NOT NULL,
    processed_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS {{name}}_processed_at_idx ON {{prefix}}_processed (processed_at);
CREATE TABLE IF NOT EXISTS {{prefix}}_aggregates (
    aggregate_type TEXT    NOT NULL,
    aggregate_id   TEXT    NOT NULL,
    last_seq       INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (aggregate_type, aggregate_id)
);
CREATE INDEX IF NOT EXISTS {{name}}_aggregates_updated_idx ON {{prefix}}_aggregates (updated_at);
