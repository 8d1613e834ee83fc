-- The version table of Migrate: one row per applied migration.
CREATE TABLE IF NOT EXISTS {{table}}_migrations (
    version    INT          NOT NULL,
    name       VARCHAR(255) NOT NULL,
    applied_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (version)
) ENGINE = InnoDB
