-- table: outbox
SELECT version FROM outbox_migrations
-- table: app.jit_outbox
SELECT version FROM app.jit_outbox_migrations
