-- table: outbox
SELECT RELEASE_ALL_LOCKS()
-- table: app.jit_outbox
SELECT RELEASE_ALL_LOCKS()
