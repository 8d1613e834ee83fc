-- $1 name, $2 owner, $3 now, $4 until. Returns a row only when owner holds
-- the lease afterwards.
INSERT INTO {{table}}_locks AS l (name, owner, locked_until) VALUES ($1, $2, $4)
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until
WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.locked_until IS NULL OR l.locked_until <= $3
RETURNING owner
