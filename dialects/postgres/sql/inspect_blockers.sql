-- Aggregates held back at @now, up to @limit: behind a dead row, or behind a
-- row backing off. Read from the blocked table (one row per blocked
-- aggregate), so the cost is bounded by the blocked aggregates, not the
-- table. Columns: aggregate type, aggregate id, pending count, dead count,
-- then the blocking row in inspect scan order (with the table's partition
-- count).
SELECT b.aggregate_type, b.aggregate_id,
       (SELECT count(*) FROM {{table}} e WHERE e.state = 0 AND e.part = b.part
           AND e.aggregate_type = b.aggregate_type AND e.aggregate_id = b.aggregate_id),
       (SELECT count(*) FROM {{table}} e WHERE e.state = 2
           AND e.aggregate_type = b.aggregate_type AND e.aggregate_id = b.aggregate_id),
       {{inspect_columns}}
FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE b.dead OR b.until > @now
ORDER BY b.seq
LIMIT @limit
