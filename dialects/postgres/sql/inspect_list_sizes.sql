-- inspect_list.sql with NULL payloads and the payload length instead.
SELECT {{inspect_columns_without_payload}},
       COALESCE(octet_length(o.payload), octet_length(o.payload_json::text), 0)
FROM {{table}} o
WHERE o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
