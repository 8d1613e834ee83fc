CREATE TABLE IF NOT EXISTS {{prefix}}_migrations (
    version    INT          NOT NULL,
    name       VARCHAR(255) NOT NULL,
    applied_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (version)
) ENGINE = InnoDB
