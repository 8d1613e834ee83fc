-- inspect_list_aggregate.sql without the payload: the same columns with NULL
-- for payload and payload_json, then the payload's length in bytes
-- (ListSummaries, BlockerSummaries: pages that show no payload never fetch
-- it). payload is a BLOB, so length() counts bytes without reading it.
SELECT {{inspect_columns_without_payload}},
       COALESCE(length(o.payload), 0)
FROM {{table}} o
WHERE o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id AND o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
