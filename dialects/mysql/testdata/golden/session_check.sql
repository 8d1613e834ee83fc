-- table: outbox
SELECT part FROM outbox_partitions
WHERE owner = ? AND IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID()
-- table: app.jit_outbox
SELECT part FROM app.jit_outbox_partitions
WHERE owner = ? AND IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID()
