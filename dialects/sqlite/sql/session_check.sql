-- Renews the lease of every partition token ?1 still owns until ?2 and
-- returns them: the whole upkeep of a session that owns partitions (its
-- relay row is not renewed; views count it live through these leases). A
-- partition whose lease ran out and that another session took is no
-- longer the token's, and is not returned.
UPDATE {{table}}_partitions SET expires_at = ?2 WHERE owner = ?1
RETURNING part
