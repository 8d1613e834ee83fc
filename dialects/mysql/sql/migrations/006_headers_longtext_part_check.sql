-- headers to LONGTEXT and a CHECK 0 <= part < partitions, in one ALTER so
-- the table is copied once. MariaDB keeps existing bad rows unchecked; MySQL
-- 8 stops on one (error 3819). See the package doc.
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
