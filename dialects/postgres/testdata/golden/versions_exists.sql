-- table: outbox
SELECT 1 WHERE to_regclass('outbox_migrations') IS NOT NULL
-- table: app.jit_outbox
SELECT 1 WHERE to_regclass('app.jit_outbox_migrations') IS NOT NULL
