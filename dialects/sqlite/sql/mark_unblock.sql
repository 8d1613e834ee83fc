-- Removes the retry blocks of rows @seqs, published after failing.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT value FROM json_each(@seqs)) AND NOT dead
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = @token)
