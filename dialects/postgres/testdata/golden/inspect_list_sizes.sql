-- table: outbox
SELECT o.seq,
       o.id::text,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       NULL,
       o.content_type,
       o.headers::text,
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
       COALESCE(octet_length(o.payload), octet_length(o.payload_json::text), 0)
FROM outbox o
WHERE o.state = $1 AND o.seq > $2
ORDER BY o.seq
LIMIT $3
-- table: app.jit_outbox
SELECT o.seq,
       o.id::text,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       NULL,
       o.content_type,
       o.headers::text,
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
       COALESCE(octet_length(o.payload), octet_length(o.payload_json::text), 0)
FROM app.jit_outbox o
WHERE o.state = $1 AND o.seq > $2
ORDER BY o.seq
LIMIT $3
