-- inspect_list.sql without the payload: the same columns with NULL for payload
-- and payload_json, then the table's partition count and the payload's length in bytes (ListSummaries,
-- BlockerSummaries: pages that show no payload never fetch it).
-- $1 state, $2 after seq, $3 limit.
SELECT o.seq,
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
FROM {{table}} o
WHERE o.state = $1 AND o.seq > $2
ORDER BY o.seq
LIMIT $3
