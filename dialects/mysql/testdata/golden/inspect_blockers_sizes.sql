-- table: outbox
SELECT b.aggregate_type, b.aggregate_id,
       (SELECT COUNT(*) FROM outbox e WHERE e.aggregate_type = b.aggregate_type
           AND e.aggregate_id = b.aggregate_id AND e.state = 0 AND e.part = b.part),
       (SELECT COUNT(*) FROM outbox e WHERE e.aggregate_type = b.aggregate_type
           AND e.aggregate_id = b.aggregate_id AND e.state = 2),
       o.seq,
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
       COALESCE(LENGTH(o.payload), 0)
FROM outbox_blocked b JOIN outbox o ON o.seq = b.seq
WHERE b.dead OR b.`until` > ?
ORDER BY b.seq
LIMIT ?
-- table: app.jit_outbox
SELECT b.aggregate_type, b.aggregate_id,
       (SELECT COUNT(*) FROM app.jit_outbox e WHERE e.aggregate_type = b.aggregate_type
           AND e.aggregate_id = b.aggregate_id AND e.state = 0 AND e.part = b.part),
       (SELECT COUNT(*) FROM app.jit_outbox e WHERE e.aggregate_type = b.aggregate_type
           AND e.aggregate_id = b.aggregate_id AND e.state = 2),
       o.seq,
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
       (SELECT m.partitions FROM app.jit_outbox_meta m),
       COALESCE(LENGTH(o.payload), 0)
FROM app.jit_outbox_blocked b JOIN app.jit_outbox o ON o.seq = b.seq
WHERE b.dead OR b.`until` > ?
ORDER BY b.seq
LIMIT ?
