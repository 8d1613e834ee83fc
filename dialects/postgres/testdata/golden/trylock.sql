-- table: outbox
INSERT INTO outbox_locks AS l (name, owner, locked_until) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until
WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.locked_until IS NULL OR l.locked_until <= $4
RETURNING owner
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_locks AS l (name, owner, locked_until) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until
WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.locked_until IS NULL OR l.locked_until <= $4
RETURNING owner
