-- As skip_ids.sql for one aggregate. Args: aggregate type, aggregate id.
DELETE b FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE o.state = 2 AND o.aggregate_type = ? AND o.aggregate_id = ?
