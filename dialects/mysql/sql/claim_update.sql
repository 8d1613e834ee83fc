-- Leases the candidates that are still claimable. {{seqs}} expands to one ?
-- per seq. Args: owner, lease until, seqs..., now.
UPDATE {{table}} SET locked_by = ?, locked_until = ?
WHERE seq IN ({{seqs}}) AND state = 0 AND (locked_until IS NULL OR locked_until <= ?)
