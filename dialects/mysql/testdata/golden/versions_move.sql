-- table: outbox
UPDATE outbox_migrations SET version = ? WHERE version = ?
-- table: app.jit_outbox
UPDATE app.jit_outbox_migrations SET version = ? WHERE version = ?
