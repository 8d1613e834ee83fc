-- inspect_blockers.sql with NULL payloads and the payload length instead.
SELECT b.aggregate_type, b.aggregate_id,
       (SELECT COUNT(*) FROM {{table}} e WHERE e.aggregate_type = b.aggregate_type
           AND e.aggregate_id = b.aggregate_id AND e.state = 0 AND e.part = b.part),
       (SELECT COUNT(*) FROM {{table}} e WHERE e.aggregate_type = b.aggregate_type
           AND e.aggregate_id = b.aggregate_id AND e.state = 2),
       {{inspect_columns_without_payload}},
       COALESCE(LENGTH(o.payload), 0)
FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE b.dead OR b.`until` > @now
ORDER BY b.seq
LIMIT @limit
