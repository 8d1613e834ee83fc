-- table: outbox
SELECT o.id, o.part, o.aggregate_type, o.aggregate_id
FROM outbox o
WHERE o.id IN (?, ?)
  AND o.state = 0 AND o.attempts = 0 AND o.deliver_at > UTC_TIMESTAMP(6)
FOR UPDATE
-- table: app.jit_outbox
SELECT o.id, o.part, o.aggregate_type, o.aggregate_id
FROM app.jit_outbox o
WHERE o.id IN (?, ?)
  AND o.state = 0 AND o.attempts = 0 AND o.deliver_at > UTC_TIMESTAMP(6)
FOR UPDATE
