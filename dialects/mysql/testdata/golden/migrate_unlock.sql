-- table: outbox
SELECT RELEASE_LOCK(?)
-- table: app.jit_outbox
SELECT RELEASE_LOCK(?)
