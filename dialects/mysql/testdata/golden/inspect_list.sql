-- table: outbox
SELECT o.seq,
       o.id,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       o.payload,
       o.content_type,
       o.headers,
       o.idempotency_key,
       o.critical,
       o.created_at,
       o.attempts,
       NULL,
       o.state,
       o.next_attempt_at,
       o.part,
       o.last_error,
       o.published_at,
       o.deliver_at,
       (SELECT m.partitions FROM outbox_meta m)
FROM outbox o
WHERE o.state = ? AND o.seq > ?
ORDER BY o.seq
LIMIT ?
-- table: app.jit_outbox
SELECT o.seq,
       o.id,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       o.payload,
       o.content_type,
       o.headers,
       o.idempotency_key,
       o.critical,
       o.created_at,
       o.attempts,
       NULL,
       o.state,
       o.next_attempt_at,
       o.part,
       o.last_error,
       o.published_at,
       o.deliver_at,
       (SELECT m.partitions FROM app.jit_outbox_meta m)
FROM app.jit_outbox o
WHERE o.state = ? AND o.seq > ?
ORDER BY o.seq
LIMIT ?
