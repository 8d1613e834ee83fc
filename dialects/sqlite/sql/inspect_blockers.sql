-- Aggregates held back at `now`: behind a dead row, or behind a row backing
-- off. Read from the blocked table (one row per blocked aggregate), so the
-- cost is bounded by the blocked aggregates, not the table. Columns:
-- aggregate type, aggregate id, pending count, dead count, then the
-- blocking row in inspect scan order (with the table's partition count). ?1 now, ?2 limit.
SELECT b.aggregate_type, b.aggregate_id,
       (SELECT count(*) FROM {{table}} e WHERE e.state = 0 AND e.part = b.part
           AND e.aggregate_type = b.aggregate_type AND e.aggregate_id = b.aggregate_id),
       (SELECT count(*) FROM {{table}} e WHERE e.state = 2
           AND e.aggregate_type = b.aggregate_type AND e.aggregate_id = b.aggregate_id),
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
       o.part,
       o.last_error,
       o.published_at,
       (SELECT m.partitions FROM {{table}}_meta m)
FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE b.dead OR b.until > ?1
ORDER BY b.seq
LIMIT ?2
