-- table: outbox
SELECT part, RELEASE_LOCK(CONCAT(?, part))
FROM outbox_partitions
WHERE part IN (?, ?) AND IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID()
-- table: app.jit_outbox
SELECT part, RELEASE_LOCK(CONCAT(?, part))
FROM app.jit_outbox_partitions
WHERE part IN (?, ?) AND IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID()
