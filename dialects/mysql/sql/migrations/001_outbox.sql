-- Indexes inside CREATE TABLE: MySQL 8 has no CREATE INDEX IF NOT EXISTS.
-- utf8mb4_bin makes aggregate ids compare exactly; times are UTC.
CREATE TABLE IF NOT EXISTS {{table}} (
    seq             BIGINT       NOT NULL AUTO_INCREMENT,
    id              VARCHAR(36)  NOT NULL,
    aggregate_type  VARCHAR(255) NOT NULL,
    aggregate_id    VARCHAR(255) NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    payload         LONGBLOB,
    content_type    VARCHAR(255) NOT NULL DEFAULT '',
    headers         TEXT,
    idempotency_key VARCHAR(255),
    critical        BOOLEAN      NOT NULL DEFAULT FALSE,
    created_at      DATETIME(6)  NOT NULL,
    state           SMALLINT     NOT NULL DEFAULT 0,
    attempts        INT          NOT NULL DEFAULT 0,
    next_attempt_at DATETIME(6)  NOT NULL,
    locked_by       VARCHAR(255),
    locked_until    DATETIME(6),
    last_error      TEXT,
    published_at    DATETIME(6),
    PRIMARY KEY (seq),
    UNIQUE KEY {{name}}_id_uq (id),
    KEY {{name}}_claim_idx (state, seq),
    KEY {{name}}_aggregate_idx (aggregate_type, aggregate_id, state, seq),
    KEY {{name}}_cleanup_idx (state, published_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {{table}}_locks (
    name         VARCHAR(191) NOT NULL,
    owner        VARCHAR(255),
    locked_until DATETIME(6),
    PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO {{table}}_locks (name) VALUES ('claim') ON DUPLICATE KEY UPDATE name = name;
