-- table: outbox
SELECT version, name FROM outbox_migrations
-- table: jit_outbox
SELECT version, name FROM jit_outbox_migrations
