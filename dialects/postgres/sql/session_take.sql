-- Takes each partition of $1 (int array literal) whose advisory lock
-- (namespace $2, partition) is free, on the session's connection, and
-- records the session's token $3 as owner with a new epoch. $4 now.
-- Returns the partitions taken. The lock is what makes ownership
-- exclusive: it dies with the connection. Each partition of the table is
-- tried once and only when the session does not own it already: advisory
-- locks count, and a lock taken twice would outlive one Release.
-- MATERIALIZED: each lock is tried exactly once, after that filter.
WITH want AS MATERIALIZED (
    SELECT pt.part AS p FROM {{table}}_partitions pt
    WHERE pt.part = ANY ($1::text::int[]) AND pt.owner IS DISTINCT FROM $3
), t AS MATERIALIZED (
    SELECT p FROM want WHERE pg_try_advisory_lock($2::int, p)
)
UPDATE {{table}}_partitions pt SET owner = $3, epoch = pt.epoch + 1, taken_at = $4, expires_at = NULL
FROM t WHERE pt.part = t.p
RETURNING pt.part
