-- As requeue_ids.sql for every dead row. $1 now.
WITH r AS (
    UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = $1
    WHERE state = 2
    RETURNING seq
), d AS (
    DELETE FROM {{table}}_blocked b USING r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
