-- Dead rows back to pending, their blocks removed. next_attempt_at goes back
-- to created_at, never past @now: a row a relay's clock saw as not yet due,
-- with its block gone, would let later rows of its aggregate pass it.
WITH r AS (
    UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = LEAST(@now, created_at)
    WHERE state = 2 AND id IN (SELECT unnest(@ids::text::uuid[]))
    RETURNING seq
), d AS (
    DELETE FROM {{table}}_blocked b USING r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
