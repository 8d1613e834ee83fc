-- Scheduled events: deliver_at is a row's due time (NULL for a row never
-- scheduled, as every row of earlier writers); deliver_idx (no partial
-- indexes here: all rows) finds the next one (NextDue) and counts those not
-- yet due (Stats). DDL is conditional, as MySQL has no ADD COLUMN IF NOT
-- EXISTS.
SET @jit_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE());
SET @jit_alter = CONCAT_WS(', ',
    (SELECT IF(COUNT(*) = 0, 'ADD COLUMN deliver_at DATETIME(6) NULL', NULL)
     FROM information_schema.columns
     WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND column_name = 'deliver_at'),
    (SELECT IF(COUNT(*) = 0, 'ADD INDEX {{name}}_deliver_idx (deliver_at)', NULL)
     FROM information_schema.statistics
     WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND index_name = '{{name}}_deliver_idx'));
SET @jit_sql = IF(@jit_alter = '', 'DO 0', CONCAT('ALTER TABLE {{table}} ', @jit_alter));
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt;
-- Aggregates whose later rows wait for a scheduled row: one hold each, on
-- the lowest held scheduled seq, until the latest due time among them.
CREATE TABLE IF NOT EXISTS {{table}}_held (
    part           INT          NOT NULL,
    aggregate_type VARCHAR(255) NOT NULL,
    aggregate_id   VARCHAR(255) NOT NULL,
    seq            BIGINT       NOT NULL,
    `until`        DATETIME(6)  NOT NULL,
    PRIMARY KEY (part, aggregate_type, aggregate_id),
    KEY {{name}}_held_until_idx (`until`)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
