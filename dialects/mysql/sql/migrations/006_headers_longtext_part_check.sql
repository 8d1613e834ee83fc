-- Two changes to the outbox table, in one ALTER TABLE so that the server
-- copies the table once (both take ALGORITHM=COPY: writes wait for the
-- copy, which takes time in proportion to the table's rows):
--
-- headers becomes LONGTEXT. TEXT holds 65,535 bytes: a longer value was
-- refused in strict mode, and a server not in strict mode cut it to fit,
-- leaving invalid JSON in the row. txoutbox bounds an event's headers to
-- MaxHeaderBytes (64 KiB of names and values), which JSON's quotes and
-- escapes can take past TEXT's limit; LONGTEXT's limit (4 GiB) is never
-- reached. Writers and relays of the previous version read and write the
-- column as before.
--
-- part gets a CHECK: 0 <= part < the table's partition count (from
-- {{table}}_meta, fixed at creation). A row outside it is in no partition
-- a relay owns, so it would never be published. Writers of every version
-- write PartitionOf(...) < P, so they are not affected. Rows written
-- before the check are kept: on MariaDB the existing rows are not checked
-- (check_constraint_checks = 0 for the ALTER, as PostgreSQL's NOT VALID);
-- Stats counts them (BadPartition) and the Inspector reports them (column
-- part). MySQL 8 checks the existing rows and stops the migration on one
-- (error 3819, naming the constraint): fix or delete such rows, then run
-- Migrate again.
--
-- MySQL DDL commits at once: the ALTER is built from a look at
-- information_schema and does only what is missing, so a migration cut
-- short runs again from its start.
SET @jit_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE());
SET @jit_alter = CONCAT_WS(', ',
    (SELECT IF(COUNT(*) = 0, 'MODIFY headers LONGTEXT', NULL)
     FROM information_schema.columns
     WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND column_name = 'headers' AND data_type = 'longtext'),
    (SELECT IF(COUNT(*) = 0,
               CONCAT('ADD CONSTRAINT {{name}}_part_ck CHECK (part >= 0 AND part < ',
                      (SELECT m.partitions FROM {{table}}_meta m), ')'),
               NULL)
     FROM information_schema.table_constraints
     WHERE constraint_schema = @jit_schema AND table_name = '{{name}}' AND constraint_name = '{{name}}_part_ck'));
SET @jit_sql = IF(VERSION() LIKE '%MariaDB%', 'SET SESSION check_constraint_checks = 0', 'DO 0');
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt;
SET @jit_sql = IF(@jit_alter = '', 'DO 0', CONCAT('ALTER TABLE {{table}} ', @jit_alter));
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt;
SET @jit_sql = IF(VERSION() LIKE '%MariaDB%', 'SET SESSION check_constraint_checks = DEFAULT', 'DO 0');
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt
