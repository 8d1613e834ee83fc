-- table: outbox
UPDATE outbox SET part = ? WHERE seq IN (?, ?)
-- table: app.jit_outbox
UPDATE app.jit_outbox SET part = ? WHERE seq IN (?, ?)
