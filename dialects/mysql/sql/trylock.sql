-- TryLock step 2: take the lease if free, expired or already ours.
-- Args: owner, until, name, owner, now.
UPDATE {{table}}_locks SET owner = ?, locked_until = ?
WHERE name = ? AND (owner IS NULL OR owner = ? OR locked_until IS NULL OR locked_until <= ?)
