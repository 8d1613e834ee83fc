-- table: outbox
SELECT pg_backend_pid()
-- table: app.jit_outbox
SELECT pg_backend_pid()
