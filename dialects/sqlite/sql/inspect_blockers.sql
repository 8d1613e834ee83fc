-- Aggregates with dead rows or whose oldest pending row (the head, which
-- holds back the rest) is backing off or leased at `now`. Columns: aggregate
-- type, aggregate id, pending count, dead count, then the head row in inspect
-- scan order (all NULL when the aggregate has no pending row).
-- Args: now, now, limit.
WITH g AS (
    SELECT aggregate_type, aggregate_id,
           SUM(CASE WHEN state = 0 THEN 1 ELSE 0 END) AS pending,
           SUM(CASE WHEN state = 2 THEN 1 ELSE 0 END) AS dead,
           MIN(CASE WHEN state = 0 THEN seq END) AS head_seq,
           MIN(CASE WHEN state = 2 THEN seq END) AS dead_seq
    FROM {{table}}
    WHERE state <> 1
    GROUP BY aggregate_type, aggregate_id
)
SELECT g.aggregate_type, g.aggregate_id, g.pending, g.dead,
       o.seq,
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
       o.locked_by,
       o.locked_until,
       o.last_error,
       o.published_at
FROM g LEFT JOIN {{table}} o ON o.seq = g.head_seq
WHERE g.dead > 0 OR o.next_attempt_at > ? OR o.locked_until > ?
ORDER BY CASE WHEN g.head_seq IS NULL THEN 1 ELSE 0 END, COALESCE(g.head_seq, g.dead_seq)
LIMIT ?
