-- table: outbox
SELECT version FROM outbox_migrations
-- table: jit_outbox
SELECT version FROM jit_outbox_migrations
