-- table: outbox
SELECT UTC_TIMESTAMP(6)
-- table: app.jit_outbox
SELECT UTC_TIMESTAMP(6)
