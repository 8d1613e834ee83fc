-- table: outbox
WITH c AS (
    SELECT w.seq FROM outbox w
    WHERE w.state = 0 AND w.critical
      AND +w.part IN (SELECT value FROM json_each(?1))
      AND (w.next_attempt_at <= ?2 OR (w.attempts = 0 AND w.deliver_at IS NULL))
    ORDER BY w.seq
    LIMIT ?3
)
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at, (SELECT COUNT(*) FROM c) AS candidates
FROM c JOIN outbox o ON o.seq = c.seq
WHERE NOT EXISTS (
      SELECT 1 FROM outbox e
      WHERE e.state = 0 AND e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.seq < o.seq
  )
  AND NOT EXISTS (
      SELECT 1 FROM outbox_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > ?2)
  )
  AND NOT EXISTS (
      SELECT 1 FROM outbox_held h
      WHERE h.part = o.part AND h.aggregate_type = o.aggregate_type AND h.aggregate_id = o.aggregate_id
        AND h.seq < o.seq AND h.until > ?2
  )
ORDER BY o.seq
LIMIT ?4
-- table: jit_outbox
WITH c AS (
    SELECT w.seq FROM jit_outbox w
    WHERE w.state = 0 AND w.critical
      AND +w.part IN (SELECT value FROM json_each(?1))
      AND (w.next_attempt_at <= ?2 OR (w.attempts = 0 AND w.deliver_at IS NULL))
    ORDER BY w.seq
    LIMIT ?3
)
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at, (SELECT COUNT(*) FROM c) AS candidates
FROM c JOIN jit_outbox o ON o.seq = c.seq
WHERE NOT EXISTS (
      SELECT 1 FROM jit_outbox e
      WHERE e.state = 0 AND e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.seq < o.seq
  )
  AND NOT EXISTS (
      SELECT 1 FROM jit_outbox_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > ?2)
  )
  AND NOT EXISTS (
      SELECT 1 FROM jit_outbox_held h
      WHERE h.part = o.part AND h.aggregate_type = o.aggregate_type AND h.aggregate_id = o.aggregate_id
        AND h.seq < o.seq AND h.until > ?2
  )
ORDER BY o.seq
LIMIT ?4
