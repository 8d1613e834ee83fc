-- inspect_list.sql without the payload: the same columns with NULL for
-- payload and payload_json, then the payload's length in bytes
-- (ListSummaries, BlockerSummaries: pages that show no payload never fetch
-- it).
SELECT {{inspect_columns_without_payload}},
       COALESCE(octet_length(o.payload), octet_length(o.payload_json::text), 0)
FROM {{table}} o
WHERE o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
