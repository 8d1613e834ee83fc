-- As requeue_ids.sql for every dead row.
WITH r AS (
    UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = LEAST(@now, created_at)
    WHERE state = 2
    RETURNING seq
), d AS (
    DELETE FROM {{table}}_blocked b USING r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
