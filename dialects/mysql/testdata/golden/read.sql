-- table: outbox
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at,
       CASE WHEN EXISTS (SELECT 1 FROM outbox_blocked k WHERE k.part IN (?, ?)) THEN 0
            ELSE (SELECT MAX(h.seq) FROM outbox h) END AS horizon
FROM outbox o USE INDEX (outbox_claim_idx, outbox_part_idx)
WHERE o.state = 0
  AND o.part IN (?, ?)
  AND o.seq > ?
  AND (o.next_attempt_at <= ? OR (o.attempts = 0 AND o.deliver_at IS NULL))
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
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at,
       CASE WHEN EXISTS (SELECT 1 FROM app.jit_outbox_blocked k WHERE k.part IN (?, ?)) THEN 0
            ELSE (SELECT MAX(h.seq) FROM app.jit_outbox h) END AS horizon
FROM app.jit_outbox o USE INDEX (jit_outbox_claim_idx, jit_outbox_part_idx)
WHERE o.state = 0
  AND o.part IN (?, ?)
  AND o.seq > ?
  AND (o.next_attempt_at <= ? OR (o.attempts = 0 AND o.deliver_at IS NULL))
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
