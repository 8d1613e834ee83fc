-- table: outbox
SELECT o.seq,
       o.id,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       NULL,
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
       (SELECT m.partitions FROM outbox_meta m),
       COALESCE(length(o.payload), 0)
FROM outbox o
WHERE o.aggregate_type = ?1 AND o.aggregate_id = ?2 AND o.state = ?3 AND o.seq > ?4
ORDER BY o.seq
LIMIT ?5
-- table: jit_outbox
SELECT o.seq,
       o.id,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       NULL,
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
       (SELECT m.partitions FROM jit_outbox_meta m),
       COALESCE(length(o.payload), 0)
FROM jit_outbox o
WHERE o.aggregate_type = ?1 AND o.aggregate_id = ?2 AND o.state = ?3 AND o.seq > ?4
ORDER BY o.seq
LIMIT ?5
