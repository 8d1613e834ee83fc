-- Tail of insert_leased.sql. Args after the rows': the relay's owner id,
-- the lease expiry.
)
INSERT INTO {{table}} (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers,
                       idempotency_key, critical, created_at, next_attempt_at, locked_by, locked_until)
SELECT v.id, v.aggregate_type, v.aggregate_id, v.event_type, v.payload, v.payload_json, v.content_type, v.headers,
       v.idempotency_key, v.critical, v.created_at, v.next_attempt_at,
       CASE WHEN f.free THEN ?::text END, CASE WHEN f.free THEN ?::timestamptz END
FROM v CROSS JOIN LATERAL (
    SELECT NOT EXISTS (
        SELECT 1 FROM {{table}} e
        WHERE e.state = 0 AND e.aggregate_type = v.aggregate_type AND e.aggregate_id = v.aggregate_id
    ) AS free
) f
RETURNING seq, id::text, locked_by IS NOT NULL
