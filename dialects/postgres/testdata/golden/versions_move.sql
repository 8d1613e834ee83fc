-- table: outbox
UPDATE outbox_migrations SET version = $1 WHERE version = $2
-- table: app.jit_outbox
UPDATE app.jit_outbox_migrations SET version = $1 WHERE version = $2
