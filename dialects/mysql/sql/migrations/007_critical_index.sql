-- Time-critical rows by state, for the relay's critical read
-- (read_critical.sql): the pending time-critical rows are one range of
-- it, in seq order, so the read's cost follows them, not the backlog of
-- ordinary ones. MySQL and MariaDB have no partial index: every row has
-- an entry, written by its insert and moved by its mark (state changes),
-- like claim_idx's. Relays of the previous version do not use it, and the
-- critical read works without it (walking claim_idx): expand only.
--
-- DDL commits at once; the statement is conditional (MySQL 8 has no CREATE
-- INDEX IF NOT EXISTS), so a migration cut short runs again from its start.
SET @jit_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE());
SET @jit_sql = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE {{table}} ADD INDEX {{name}}_critical_idx (critical, state, seq)', 'DO 0')
    FROM information_schema.statistics
    WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND index_name = '{{name}}_critical_idx'
);
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt
