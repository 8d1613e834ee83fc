-- inspect_list_aggregate.sql with NULL payloads and the payload length instead.
SELECT {{inspect_columns_without_payload}},
       COALESCE(length(o.payload), 0)
FROM {{table}} o
WHERE o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id AND o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
