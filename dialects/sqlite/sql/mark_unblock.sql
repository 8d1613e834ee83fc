-- Removes the retry blocks of @seqs (a JSON array of seqs that had failed
-- and are now published) in partitions @token owns.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT value FROM json_each(@seqs)) AND NOT dead
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = @token)
