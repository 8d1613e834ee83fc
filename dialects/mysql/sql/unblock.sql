-- Removes the retry blocks of rows published after failing, in partitions
-- the token owns. {{seqs}} expands to one ? per seq. Args: seqs..., token.
DELETE b FROM {{table}}_blocked b JOIN {{table}}_partitions p ON p.part = b.part
WHERE b.seq IN ({{seqs}}) AND NOT b.dead AND p.owner = ?
