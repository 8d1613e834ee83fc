-- The rows of the aggregate @aggregate_type, @aggregate_id in @state past
-- seq @after, in seq order, up to @limit (Inspector.List).
SELECT {{inspect_columns}}
FROM {{table}} o
WHERE o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id AND o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
