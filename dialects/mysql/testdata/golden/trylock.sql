-- table: outbox
UPDATE outbox_locks SET owner = ?, locked_until = ?
WHERE name = ? AND (owner IS NULL OR owner = ? OR locked_until IS NULL OR locked_until <= ?)
-- table: app.jit_outbox
UPDATE app.jit_outbox_locks SET owner = ?, locked_until = ?
WHERE name = ? AND (owner IS NULL OR owner = ? OR locked_until IS NULL OR locked_until <= ?)
