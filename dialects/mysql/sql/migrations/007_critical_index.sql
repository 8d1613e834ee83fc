-- Time-critical rows by state for read_critical.sql: the pending ones are one
-- range in seq order, so its cost follows them, not the backlog. Optional for
-- the read (it falls back to claim_idx): expand only. DDL is conditional.
SET @jit_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE());
SET @jit_sql = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE {{table}} ADD INDEX {{name}}_critical_idx (critical, state, seq)', 'DO 0')
    FROM information_schema.statistics
    WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND index_name = '{{name}}_critical_idx'
);
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt
