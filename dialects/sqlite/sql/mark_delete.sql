-- Deletes the published rows of @seqs in partitions @token owns.
DELETE FROM {{table}}
WHERE seq IN (SELECT value FROM json_each(@seqs)) AND state = 0
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = @token)
