-- Columns (inspect scan order): seq, id, aggregate_type, aggregate_id, event_type,
-- payload, content_type, headers, idempotency_key, critical, created_at,
-- attempts, payload_json, state, next_attempt_at, part, last_error,
-- published_at, then the table's partition count (the row's partition
-- must be below it).
SELECT {{inspect_columns}}
FROM {{table}} o
WHERE o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id AND o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
