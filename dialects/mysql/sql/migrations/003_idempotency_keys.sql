-- Idempotency keys deduplicate: idempotency_key is unique per table. MySQL
-- and MariaDB have no partial index, and need none: InnoDB lets any number
-- of NULLs into a UNIQUE index, so events without a key never collide. An
-- INSERT whose key is already in the table fails (error 1062 on this
-- index; the dialect reports it as dialects.ErrDuplicateIdempotencyKey); a
-- concurrent transaction with the same key waits for the first to end and
-- fails only if it commits. The column's collation, utf8mb4_bin, compares
-- keys byte for byte, except that it pads: keys that differ only by
-- trailing spaces are the same key here. Rows that share a key in an
-- existing table stop the migration with an error naming them, before the
-- index is built.
--
-- DDL commits at once; the statement is conditional (MySQL 8 has no CREATE
-- INDEX IF NOT EXISTS), so a migration cut short runs again from its start.
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
