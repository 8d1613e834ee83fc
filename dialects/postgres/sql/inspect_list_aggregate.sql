-- Columns (inspect scan order): seq, id, aggregate_type, aggregate_id, event_type,
-- payload, content_type, headers, idempotency_key, critical, created_at,
-- attempts, payload_json, state, next_attempt_at, part, last_error,
-- published_at, then the table's partition count (the row's partition
-- must be below it).
-- $1 aggregate type, $2 aggregate id, $3 state, $4 after seq, $5 limit.
SELECT o.seq,
       o.id::text,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       o.payload,
       o.content_type,
       o.headers::text,
       o.idempotency_key,
       o.critical,
       o.created_at,
       o.attempts,
       o.payload_json::text,
       o.state,
       o.next_attempt_at,
       o.part,
       o.last_error,
       o.published_at,
       (SELECT m.partitions FROM {{table}}_meta m)
FROM {{table}} o
WHERE o.aggregate_type = $1 AND o.aggregate_id = $2 AND o.state = $3 AND o.seq > $4
ORDER BY o.seq
LIMIT $5
