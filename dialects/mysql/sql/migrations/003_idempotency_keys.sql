-- Unique idempotency keys (error 1062, reported as
-- ErrDuplicateIdempotencyKey); InnoDB admits many NULLs, so no partial index
-- is needed. utf8mb4_bin pads: keys differing only by trailing spaces
-- collide. The Go step refuses existing duplicates; the DDL is conditional.
-- step: check-idempotency-keys
SET @jit_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE());
SET @jit_sql = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE {{table}} ADD UNIQUE INDEX {{name}}_idempotency_key_idx (idempotency_key)', 'DO 0')
    FROM information_schema.statistics
    WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND index_name = '{{name}}_idempotency_key_idx'
);
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt;
