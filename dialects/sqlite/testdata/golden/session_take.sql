-- table: outbox
UPDATE outbox_partitions
SET owner = ?1, epoch = epoch + 1, taken_at = ?2, expires_at = ?3
WHERE part IN (SELECT value FROM json_each(?4))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= ?2)
RETURNING part
-- table: jit_outbox
UPDATE jit_outbox_partitions
SET owner = ?1, epoch = epoch + 1, taken_at = ?2, expires_at = ?3
WHERE part IN (SELECT value FROM json_each(?4))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= ?2)
RETURNING part
