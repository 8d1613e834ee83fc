-- table: outbox
SELECT GET_LOCK(?, 0)
-- table: app.jit_outbox
SELECT GET_LOCK(?, 0)
