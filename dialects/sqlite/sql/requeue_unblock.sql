-- Removes the blocks of the requeued rows, in the requeue's transaction.
DELETE FROM {{table}}_blocked WHERE seq IN (SELECT value FROM json_each(@seqs))
