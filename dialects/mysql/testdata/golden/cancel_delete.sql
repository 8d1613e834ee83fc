-- table: outbox
DELETE FROM outbox WHERE id IN (?, ?)
-- table: app.jit_outbox
DELETE FROM app.jit_outbox WHERE id IN (?, ?)
