-- Dead rows back to pending, each published before the later rows of its
-- aggregate, whichever read finds them: its block stays, no longer dead,
-- until the row is published (until = infinity; the relay's mark removes
-- the block of a published row that was attempted before). attempts = 1:
-- the dead-lettering counts as the row's first attempt, which is also what
-- makes the relay remove the block. Reads ahead of a relay that began a
-- chain of reads before the requeue rely on the block: they do not look
-- for an earlier pending row of an aggregate below their horizon.
-- next_attempt_at goes back to the row's creation, never later than now:
-- due at once, whatever the relay's clock. Returns the count.
-- $1 now, $2 array literal of event ids.
WITH r AS (
    UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = LEAST($1, created_at)
    WHERE state = 2 AND id = ANY ($2::text::uuid[])
    RETURNING seq
), d AS (
    UPDATE {{table}}_blocked b SET dead = FALSE, until = 'infinity' FROM r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
