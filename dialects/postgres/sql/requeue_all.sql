-- As requeue_ids.sql for every dead row. $1 now.
WITH r AS (
    UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = LEAST($1, created_at)
    WHERE state = 2
    RETURNING seq
), d AS (
    UPDATE {{table}}_blocked b SET dead = FALSE, until = 'infinity' FROM r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
