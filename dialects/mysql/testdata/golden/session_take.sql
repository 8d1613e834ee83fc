-- table: outbox
SELECT part,
       CASE WHEN IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID() THEN 0
            ELSE GET_LOCK(CONCAT(?, part), 0) END
FROM outbox_partitions
WHERE part IN (?, ?)
-- table: app.jit_outbox
SELECT part,
       CASE WHEN IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID() THEN 0
            ELSE GET_LOCK(CONCAT(?, part), 0) END
FROM app.jit_outbox_partitions
WHERE part IN (?, ?)
