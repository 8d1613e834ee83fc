-- As skip_ids.sql for one aggregate.
WITH d AS (
    DELETE FROM {{table}}_blocked b USING {{table}} o
    WHERE b.seq = o.seq AND o.state = 2 AND o.aggregate_type = @aggregate_type AND o.aggregate_id = @aggregate_id
    RETURNING 1
)
SELECT count(*) FROM d
