-- Renews the leases of the partitions @token still owns and returns them:
-- the whole upkeep of an owning session (views count it live through them).
UPDATE {{table}}_partitions SET expires_at = @until WHERE owner = @token
RETURNING part
