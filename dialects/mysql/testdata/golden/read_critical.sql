-- table: outbox
WITH c AS (
    SELECT w.seq FROM outbox w USE INDEX (outbox_critical_idx)
    WHERE w.critical = TRUE AND w.state = 0
      AND w.part IN (?, ?)
      AND (w.next_attempt_at <= ? OR (w.attempts = 0 AND w.deliver_at IS NULL))
    ORDER BY w.seq
    LIMIT ?
)
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at, (SELECT COUNT(*) FROM c) AS candidates
FROM c JOIN outbox o ON o.seq = c.seq
WHERE NOT EXISTS (
      SELECT 1 FROM outbox e
      WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.state = 0 AND e.seq < o.seq
  )
  AND NOT EXISTS (
      SELECT 1 FROM outbox_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.`until` > ?)
  )
  AND NOT EXISTS (
      SELECT 1 FROM outbox_held k
      WHERE k.part = o.part AND k.aggregate_type = o.aggregate_type AND k.aggregate_id = o.aggregate_id
        AND k.seq < o.seq AND k.`until` > ?
  )
ORDER BY o.seq
LIMIT ?
-- table: app.jit_outbox
WITH c AS (
    SELECT w.seq FROM app.jit_outbox w USE INDEX (jit_outbox_critical_idx)
    WHERE w.critical = TRUE AND w.state = 0
      AND w.part IN (?, ?)
      AND (w.next_attempt_at <= ? OR (w.attempts = 0 AND w.deliver_at IS NULL))
    ORDER BY w.seq
    LIMIT ?
)
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at, (SELECT COUNT(*) FROM c) AS candidates
FROM c JOIN app.jit_outbox o ON o.seq = c.seq
WHERE NOT EXISTS (
      SELECT 1 FROM app.jit_outbox e
      WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.state = 0 AND e.seq < o.seq
  )
  AND NOT EXISTS (
      SELECT 1 FROM app.jit_outbox_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.`until` > ?)
  )
  AND NOT EXISTS (
      SELECT 1 FROM app.jit_outbox_held k
      WHERE k.part = o.part AND k.aggregate_type = o.aggregate_type AND k.aggregate_id = o.aggregate_id
        AND k.seq < o.seq AND k.`until` > ?
  )
ORDER BY o.seq
LIMIT ?
