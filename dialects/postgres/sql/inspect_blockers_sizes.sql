-- inspect_blockers.sql without the payload: the same columns with NULL for payload
-- and payload_json, then the table's partition count and the payload's length in bytes (ListSummaries,
-- BlockerSummaries: pages that show no payload never fetch it).
-- $1 now, $2 limit.
SELECT b.aggregate_type, b.aggregate_id,
       (SELECT count(*) FROM {{table}} e WHERE e.state = 0 AND e.part = b.part
           AND e.aggregate_type = b.aggregate_type AND e.aggregate_id = b.aggregate_id),
       (SELECT count(*) FROM {{table}} e WHERE e.state = 2
           AND e.aggregate_type = b.aggregate_type AND e.aggregate_id = b.aggregate_id),
       o.seq,
       o.id::text,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       NULL,
       o.content_type,
       o.headers::text,
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
       (SELECT m.partitions FROM {{table}}_meta m),
       COALESCE(octet_length(o.payload), octet_length(o.payload_json::text), 0)
FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE b.dead OR b.until > $1
ORDER BY b.seq
LIMIT $2
