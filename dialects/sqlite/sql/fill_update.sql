-- Migration 002: sets partition @part on the rows of @seqs.
UPDATE {{table}} SET part = @part WHERE seq IN (SELECT value FROM json_each(@seqs))
