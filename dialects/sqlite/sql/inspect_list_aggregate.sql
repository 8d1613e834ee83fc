-- inspect_list.sql for one aggregate.
SELECT {{inspect_columns}}
FROM {{table}} o
WHERE o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id AND o.state = @state AND o.seq > @after
ORDER BY o.seq
LIMIT @limit
