-- Deletes the published rows of ?2 (JSON array of seqs) in partitions token
-- ?1 owns.
DELETE FROM {{table}}
WHERE seq IN (SELECT value FROM json_each(?2)) AND state = 0
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = ?1)
