-- The rows in @state past seq @after, in seq order (Inspector.List).
SELECT {{inspect_columns}}
FROM {{table}} o
WHERE o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
