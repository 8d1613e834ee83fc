-- Removes the blocks of requeued rows, in the requeue's transaction. ?1
-- JSON array of seqs.
DELETE FROM {{table}}_blocked WHERE seq IN (SELECT value FROM json_each(?1))
