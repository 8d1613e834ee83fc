-- table: outbox
SELECT pg_cancel_backend($1)
-- table: app.jit_outbox
SELECT pg_cancel_backend($1)
