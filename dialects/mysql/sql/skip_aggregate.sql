-- As skip_ids.sql for the aggregate @aggregate_type, @aggregate_id.
DELETE b FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE o.state = 2 AND o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id
