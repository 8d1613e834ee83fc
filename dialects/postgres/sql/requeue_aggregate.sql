-- As requeue_ids.sql for one aggregate. $1 now, $2 aggregate type, $3 id.
WITH r AS (
    UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = LEAST($1, created_at)
    WHERE state = 2 AND aggregate_type = $2 AND aggregate_id = $3
    RETURNING seq
), d AS (
    UPDATE {{table}}_blocked b SET dead = FALSE, until = 'infinity' FROM r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
