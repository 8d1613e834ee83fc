-- table: outbox
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at,
       CASE WHEN EXISTS (SELECT 1 FROM outbox_blocked k WHERE k.part IN (SELECT value FROM json_each(?1))) THEN 0
            ELSE (SELECT MAX(h.seq) FROM outbox h) END AS horizon
FROM outbox o
WHERE o.state = 0
  AND +o.part IN (SELECT value FROM json_each(?1))
  AND o.seq > ?2
  AND (o.next_attempt_at <= ?3 OR (o.attempts = 0 AND o.deliver_at IS NULL))
  AND NOT EXISTS (
      SELECT 1 FROM outbox_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > ?3)
  )
  AND NOT EXISTS (
      SELECT 1 FROM outbox_held h
      WHERE h.part = o.part AND h.aggregate_type = o.aggregate_type AND h.aggregate_id = o.aggregate_id
        AND h.seq < o.seq AND h.until > ?3
  )
ORDER BY o.seq
LIMIT ?4
-- table: jit_outbox
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at,
       CASE WHEN EXISTS (SELECT 1 FROM jit_outbox_blocked k WHERE k.part IN (SELECT value FROM json_each(?1))) THEN 0
            ELSE (SELECT MAX(h.seq) FROM jit_outbox h) END AS horizon
FROM jit_outbox o
WHERE o.state = 0
  AND +o.part IN (SELECT value FROM json_each(?1))
  AND o.seq > ?2
  AND (o.next_attempt_at <= ?3 OR (o.attempts = 0 AND o.deliver_at IS NULL))
  AND NOT EXISTS (
      SELECT 1 FROM jit_outbox_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > ?3)
  )
  AND NOT EXISTS (
      SELECT 1 FROM jit_outbox_held h
      WHERE h.part = o.part AND h.aggregate_type = o.aggregate_type AND h.aggregate_id = o.aggregate_id
        AND h.seq < o.seq AND h.until > ?3
  )
ORDER BY o.seq
LIMIT ?4
