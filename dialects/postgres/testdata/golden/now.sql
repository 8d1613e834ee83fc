-- table: outbox
SELECT clock_timestamp()
-- table: app.jit_outbox
SELECT clock_timestamp()
