-- table: outbox
WITH u AS (
    UPDATE outbox_partitions SET owner = NULL WHERE owner = $1 RETURNING 1
), d AS (
    DELETE FROM outbox_relays WHERE token = $1
)
SELECT pg_advisory_unlock_all()
-- table: app.jit_outbox
WITH u AS (
    UPDATE app.jit_outbox_partitions SET owner = NULL WHERE owner = $1 RETURNING 1
), d AS (
    DELETE FROM app.jit_outbox_relays WHERE token = $1
)
SELECT pg_advisory_unlock_all()
