-- Removes the retry blocks of rows @seqs, published after failing.
DELETE b FROM {{table}}_blocked b JOIN {{table}}_partitions p ON p.part = b.part
WHERE b.seq IN (@seqs...) AND NOT b.dead AND p.owner = @token
