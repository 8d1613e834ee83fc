-- table: outbox
UPDATE outbox_partitions SET owner = NULL, expires_at = NULL
WHERE part IN (SELECT value FROM json_each(?1)) AND owner = ?2
-- table: jit_outbox
UPDATE jit_outbox_partitions SET owner = NULL, expires_at = NULL
WHERE part IN (SELECT value FROM json_each(?1)) AND owner = ?2
