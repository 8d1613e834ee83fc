-- As skip_ids.sql for every dead row's block.
WITH d AS (
    DELETE FROM {{table}}_blocked b WHERE b.dead
    RETURNING 1
)
SELECT count(*) FROM d
