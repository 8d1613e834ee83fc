-- Tail of insert_leased.sql. Args after the rows': owner, lease until
-- (microseconds).
)
INSERT INTO {{table}} (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key,
                       critical, created_at, next_attempt_at, locked_by, locked_until)
SELECT f.id, f.aggregate_type, f.aggregate_id, f.event_type, f.payload, f.content_type, f.headers, f.idempotency_key,
       f.critical, f.created_at, f.next_attempt_at, CASE WHEN f.free THEN ? END, CASE WHEN f.free THEN ? END
FROM (
    SELECT v.*, NOT EXISTS (
        SELECT 1 FROM {{table}} e
        WHERE e.state = 0 AND e.aggregate_type = v.aggregate_type AND e.aggregate_id = v.aggregate_id
    ) AS free
    FROM v
) f
RETURNING seq, id, locked_by IS NOT NULL
