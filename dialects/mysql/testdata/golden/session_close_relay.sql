-- table: outbox
DELETE FROM outbox_relays WHERE token = ?
-- table: app.jit_outbox
DELETE FROM app.jit_outbox_relays WHERE token = ?
