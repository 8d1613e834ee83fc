-- Indexes inside CREATE TABLE: MySQL 8 has no CREATE INDEX IF NOT EXISTS.
-- The processed primary key decides first delivery against duplicate.
CREATE TABLE IF NOT EXISTS {{prefix}}_processed (
    event_id       CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    aggregate_type VARCHAR(255) NOT NULL,
    aggregate_id   VARCHAR(255) NOT NULL,
    event_type     VARCHAR(255) NOT NULL,
    seq            BIGINT,
    payload_hash   BINARY(32)   NOT NULL,
    processed_at   DATETIME(6)  NOT NULL,
    PRIMARY KEY (event_id),
    KEY {{name}}_processed_at_idx (processed_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {{prefix}}_aggregates (
    aggregate_type VARCHAR(255) NOT NULL,
    aggregate_id   VARCHAR(255) NOT NULL,
    last_seq       BIGINT       NOT NULL,
    updated_at     DATETIME(6)  NOT NULL,
    PRIMARY KEY (aggregate_type, aggregate_id),
    KEY {{name}}_aggregates_updated_idx (updated_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
