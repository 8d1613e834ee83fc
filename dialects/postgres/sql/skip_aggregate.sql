-- As skip_ids.sql for one aggregate. $1 aggregate type, $2 aggregate id.
WITH d AS (
    DELETE FROM {{table}}_blocked b USING {{table}} o
    WHERE b.seq = o.seq AND o.state = 2 AND o.aggregate_type = $1 AND o.aggregate_id = $2
    RETURNING 1
)
SELECT count(*) FROM d
