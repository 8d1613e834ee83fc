-- table: outbox
SELECT version, name FROM outbox_migrations
-- table: app.jit_outbox
SELECT version, name FROM app.jit_outbox_migrations
