-- Columns (inspect scan order): seq, id, aggregate_type, aggregate_id, event_type,
-- payload, content_type, headers, idempotency_key, critical, created_at,
-- attempts, payload_json, state, next_attempt_at, part, last_error,
-- published_at, then the table's partition count (the row's partition
-- must be below it).
-- Args: aggregate type, aggregate id, state, after seq, limit.
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
       (SELECT m.partitions FROM {{table}}_meta m)
FROM {{table}} o
WHERE o.aggregate_type = ? AND o.aggregate_id = ? AND o.state = ? AND o.seq > ?
ORDER BY o.seq
LIMIT ?
