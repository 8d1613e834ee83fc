-- Removes the retry blocks of ?2 (JSON array of seqs that had failed and
-- are now published) in partitions token ?1 owns.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT value FROM json_each(?2)) AND NOT dead
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = ?1)
