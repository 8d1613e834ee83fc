-- table: outbox
DELETE FROM outbox
WHERE id IN (SELECT value FROM json_each(?1))
  AND state = 0 AND attempts = 0 AND deliver_at IS NOT NULL AND deliver_at > ?2
RETURNING id, part, aggregate_type, aggregate_id
-- table: jit_outbox
DELETE FROM jit_outbox
WHERE id IN (SELECT value FROM json_each(?1))
  AND state = 0 AND attempts = 0 AND deliver_at IS NOT NULL AND deliver_at > ?2
RETURNING id, part, aggregate_type, aggregate_id
