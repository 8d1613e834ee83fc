-- table: outbox
UPDATE outbox_partitions
SET owner = ?2, epoch = epoch + 1, taken_at = ?3, expires_at = ?4
WHERE part IN (SELECT value FROM json_each(?1))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= ?3)
RETURNING part
-- table: jit_outbox
UPDATE jit_outbox_partitions
SET owner = ?2, epoch = epoch + 1, taken_at = ?3, expires_at = ?4
WHERE part IN (SELECT value FROM json_each(?1))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= ?3)
RETURNING part
