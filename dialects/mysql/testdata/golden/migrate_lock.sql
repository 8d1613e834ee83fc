-- table: outbox
SELECT GET_LOCK(?, ?)
-- table: app.jit_outbox
SELECT GET_LOCK(?, ?)
