-- table: outbox
SELECT CONNECTION_ID()
-- table: app.jit_outbox
SELECT CONNECTION_ID()
