-- The blocks of requeued rows, in the requeue's transaction: no longer
-- dead, they hold the later rows of their aggregates until the requeued row
-- is published (until = the largest integer; the relay's mark removes the
-- block of a published row that was attempted before, and requeue_ids.sql
-- sets attempts to 1). Reads ahead of a relay that began a chain of reads
-- before the requeue rely on it: they do not look for an earlier pending
-- row of an aggregate below their horizon. ?1 JSON array of seqs.
UPDATE {{table}}_blocked SET dead = 0, until = 9223372036854775807
WHERE seq IN (SELECT value FROM json_each(?1))
