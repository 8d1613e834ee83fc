-- table: outbox
SELECT owner FROM outbox_locks WHERE name = ?
-- table: app.jit_outbox
SELECT owner FROM app.jit_outbox_locks WHERE name = ?
