-- inspect_list_aggregate.sql without the payload: the same columns with NULL for payload
-- and payload_json, then the table's partition count and the payload's length in bytes (ListSummaries,
-- BlockerSummaries: pages that show no payload never fetch it).
-- Args: aggregate type, aggregate id, state, after seq, limit.
SELECT o.seq,
       o.id,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       NULL,
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
       (SELECT m.partitions FROM {{table}}_meta m),
       COALESCE(LENGTH(o.payload), 0)
FROM {{table}} o
WHERE o.aggregate_type = ? AND o.aggregate_id = ? AND o.state = ? AND o.seq > ?
ORDER BY o.seq
LIMIT ?
