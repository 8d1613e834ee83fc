-- table: outbox
WITH u AS (
    UPDATE outbox_partitions SET owner = NULL WHERE owner = $1 RETURNING 1
)
DELETE FROM outbox_relays WHERE token = $1
-- table: app.jit_outbox
WITH u AS (
    UPDATE app.jit_outbox_partitions SET owner = NULL WHERE owner = $1 RETURNING 1
)
DELETE FROM app.jit_outbox_relays WHERE token = $1
