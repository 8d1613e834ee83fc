-- table: outbox
UPDATE outbox_partitions SET expires_at = ?2 WHERE owner = ?1
RETURNING part
-- table: jit_outbox
UPDATE jit_outbox_partitions SET expires_at = ?2 WHERE owner = ?1
RETURNING part
