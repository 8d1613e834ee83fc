-- inspect_list.sql with NULL payloads and the payload length instead.
SELECT {{inspect_columns_without_payload}},
       COALESCE(length(o.payload), 0)
FROM {{table}} o
WHERE o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
