-- As skip_ids.sql for one aggregate.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT o.seq FROM {{table}} o WHERE o.state = 2 AND o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id)
