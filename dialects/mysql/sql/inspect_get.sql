-- The row of event @id. Columns (inspect scan order): seq, id, aggregate_type, aggregate_id, event_type,
-- payload, content_type, headers, idempotency_key, critical, created_at,
-- attempts, payload_json, state, next_attempt_at, part, last_error,
-- published_at, then the table's partition count (the row's partition
-- must be below it).
SELECT {{inspect_columns}}
FROM {{table}} o
WHERE o.id = @id
