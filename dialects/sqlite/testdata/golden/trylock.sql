-- table: outbox
INSERT INTO outbox_locks (name, owner, locked_until) VALUES (?1, ?2, ?3)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until
WHERE outbox_locks.owner IS NULL OR outbox_locks.owner = excluded.owner
   OR outbox_locks.locked_until IS NULL OR outbox_locks.locked_until <= ?4
RETURNING owner
-- table: jit_outbox
INSERT INTO jit_outbox_locks (name, owner, locked_until) VALUES (?1, ?2, ?3)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until
WHERE jit_outbox_locks.owner IS NULL OR jit_outbox_locks.owner = excluded.owner
   OR jit_outbox_locks.locked_until IS NULL OR jit_outbox_locks.locked_until <= ?4
RETURNING owner
