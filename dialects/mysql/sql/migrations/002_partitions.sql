-- Partitions owned by relay sessions (GET_LOCK on their connections)
-- replace per-row leases. Every statement is idempotent (DDL commits at
-- once); conditional DDL is prepared from information_schema in session
-- variables, as MySQL 8 has no ADD COLUMN IF NOT EXISTS.
SET @jit_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE());
SET @jit_sql = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE {{table}} ADD COLUMN part INT NOT NULL DEFAULT 0', 'DO 0')
    FROM information_schema.columns
    WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND column_name = 'part'
);
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt;
CREATE TABLE IF NOT EXISTS {{table}}_meta (
    partitions INT         NOT NULL,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    CONSTRAINT {{name}}_meta_partitions_ck CHECK (partitions BETWEEN 1 AND 4096)
) ENGINE = InnoDB;
INSERT INTO {{table}}_meta (partitions)
SELECT {{partitions}} FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM {{table}}_meta);
-- step: fill-partitions
-- No default: an older writer, which does not know partitions, fails loudly
-- instead of writing rows no relay reads.
ALTER TABLE {{table}} ALTER COLUMN part DROP DEFAULT;
SET @jit_sql = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE {{table}} ADD INDEX {{name}}_part_idx (state, part, seq)', 'DO 0')
    FROM information_schema.statistics
    WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND index_name = '{{name}}_part_idx'
);
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt;
CREATE TABLE IF NOT EXISTS {{table}}_partitions (
    part       INT          NOT NULL,
    owner      VARCHAR(255),
    epoch      BIGINT       NOT NULL DEFAULT 0,
    taken_at   DATETIME(6),
    expires_at DATETIME(6),
    PRIMARY KEY (part)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- A 16^3 cross join: a recursive CTE stops at 1000 rows by default.
INSERT INTO {{table}}_partitions (part)
SELECT g.n FROM (
    SELECT a.d + 16 * b.d + 256 * c.d AS n
    FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5
          UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10
          UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) a
    CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5
          UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10
          UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) b
    CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5
          UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10
          UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) c
) g
JOIN {{table}}_meta m ON g.n < m.partitions
ON DUPLICATE KEY UPDATE part = {{table}}_partitions.part;
CREATE TABLE IF NOT EXISTS {{table}}_relays (
    id         BIGINT       NOT NULL AUTO_INCREMENT,
    token      VARCHAR(255) NOT NULL,
    name       VARCHAR(255) NOT NULL,
    started_at DATETIME(6)  NOT NULL,
    expires_at DATETIME(6),
    PRIMARY KEY (id),
    UNIQUE KEY {{name}}_relays_token_uq (token)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- Aggregates held back behind a failed row (retry or dead): one row each.
CREATE TABLE IF NOT EXISTS {{table}}_blocked (
    part           INT          NOT NULL,
    aggregate_type VARCHAR(255) NOT NULL,
    aggregate_id   VARCHAR(255) NOT NULL,
    seq            BIGINT       NOT NULL,
    dead           BOOLEAN      NOT NULL,
    `until`        DATETIME(6)  NOT NULL,
    PRIMARY KEY (part, aggregate_type, aggregate_id),
    KEY {{name}}_blocked_seq_idx (seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`)
SELECT o.part, o.aggregate_type, o.aggregate_id, o.seq, FALSE, o.next_attempt_at
FROM {{table}} o
JOIN (
    SELECT MIN(seq) AS seq FROM {{table}}
    WHERE state = 0 AND attempts > 0
    GROUP BY part, aggregate_type, aggregate_id
) f ON f.seq = o.seq
ON DUPLICATE KEY UPDATE seq = {{table}}_blocked.seq;
DELETE FROM {{table}}_locks WHERE name = 'claim';
SET @jit_sql = (
    SELECT IF(COUNT(*) = 0, 'DO 0', 'ALTER TABLE {{table}} DROP COLUMN locked_by, DROP COLUMN locked_until')
    FROM information_schema.columns
    WHERE table_schema = @jit_schema AND table_name = '{{name}}' AND column_name = 'locked_by'
);
PREPARE jit_stmt FROM @jit_sql;
EXECUTE jit_stmt;
DEALLOCATE PREPARE jit_stmt
