-- Removes the retry blocks of the rows @seqs, published after failing, in
-- partitions @token owns.
DELETE b FROM {{table}}_blocked b JOIN {{table}}_partitions p ON p.part = b.part
WHERE b.seq IN (@seqs...) AND NOT b.dead AND p.owner = @token
