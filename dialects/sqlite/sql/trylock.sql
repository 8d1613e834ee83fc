-- ?1 name, ?2 owner, ?3 now, ?4 until. Returns a row only when owner holds
-- the lease afterwards.
INSERT INTO {{table}}_locks (name, owner, locked_until) VALUES (?1, ?2, ?4)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until
WHERE {{table}}_locks.owner IS NULL OR {{table}}_locks.owner = excluded.owner
   OR {{table}}_locks.locked_until IS NULL OR {{table}}_locks.locked_until <= ?3
RETURNING owner
