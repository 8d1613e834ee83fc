-- Renews the lease of every partition @token still owns until @until and
-- returns them: the whole upkeep of a session that owns partitions (its
-- relay row is not renewed; views count it live through these leases). A
-- partition whose lease ran out and that another session took is no
-- longer the token's, and is not returned.
UPDATE {{table}}_partitions SET expires_at = @until WHERE owner = @token
RETURNING part
