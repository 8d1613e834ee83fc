-- table: outbox
WITH want AS MATERIALIZED (
    SELECT pt.part AS p FROM outbox_partitions pt
    WHERE pt.part = ANY ($1::text::int[]) AND pt.owner IS DISTINCT FROM $2
), t AS MATERIALIZED (
    SELECT p FROM want WHERE pg_try_advisory_lock($3::int, p)
)
UPDATE outbox_partitions pt SET owner = $2, epoch = pt.epoch + 1, taken_at = $4, expires_at = NULL
FROM t WHERE pt.part = t.p
RETURNING pt.part
-- table: app.jit_outbox
WITH want AS MATERIALIZED (
    SELECT pt.part AS p FROM app.jit_outbox_partitions pt
    WHERE pt.part = ANY ($1::text::int[]) AND pt.owner IS DISTINCT FROM $2
), t AS MATERIALIZED (
    SELECT p FROM want WHERE pg_try_advisory_lock($3::int, p)
)
UPDATE app.jit_outbox_partitions pt SET owner = $2, epoch = pt.epoch + 1, taken_at = $4, expires_at = NULL
FROM t WHERE pt.part = t.p
RETURNING pt.part
