-- table: outbox
UPDATE outbox_partitions SET owner = NULL, expires_at = NULL WHERE owner = ?1
-- table: jit_outbox
UPDATE jit_outbox_partitions SET owner = NULL, expires_at = NULL WHERE owner = ?1
