-- inspect_list_aggregate.sql without the payload: the same columns with NULL for payload
-- and payload_json, then the table's partition count and the payload's length in bytes (ListSummaries,
-- BlockerSummaries: pages that show no payload never fetch it).
-- $1 aggregate type, $2 aggregate id, $3 state, $4 after seq, $5 limit.
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
WHERE o.aggregate_type = $1 AND o.aggregate_id = $2 AND o.state = $3 AND o.seq > $4
ORDER BY o.seq
LIMIT $5
