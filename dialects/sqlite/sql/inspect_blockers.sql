-- Aggregates held back at @now (dead or backing off). Reads the blocked
-- table, so the cost follows the blocked aggregates, not the table.
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
