-- As skip_ids.sql for every dead row.
WITH d AS (
    DELETE FROM {{table}}_blocked b WHERE b.dead
    RETURNING 1
)
SELECT count(*) FROM d
