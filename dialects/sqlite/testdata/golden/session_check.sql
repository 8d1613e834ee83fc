-- table: outbox
UPDATE outbox_partitions SET expires_at = ?1 WHERE owner = ?2
RETURNING part
-- table: jit_outbox
UPDATE jit_outbox_partitions SET expires_at = ?1 WHERE owner = ?2
RETURNING part
