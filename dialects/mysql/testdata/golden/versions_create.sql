-- table: outbox
CREATE TABLE IF NOT EXISTS outbox_migrations (
    version    INT          NOT NULL,
    name       VARCHAR(255) NOT NULL,
    applied_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (version)
) ENGINE = InnoDB
-- table: app.jit_outbox
CREATE TABLE IF NOT EXISTS app.jit_outbox_migrations (
    version    INT          NOT NULL,
    name       VARCHAR(255) NOT NULL,
    applied_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (version)
) ENGINE = InnoDB
