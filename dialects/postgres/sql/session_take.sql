-- Takes each partition of @parts (an int array literal) whose advisory
-- lock (namespace @part_ns, partition) is free, on the session's
-- connection, and records the session's @token as owner with a new epoch,
-- taken at @now.
-- Returns the partitions taken. The lock is what makes ownership
-- exclusive: it dies with the connection. Each partition of the table is
-- tried once and only when the session does not own it already: advisory
-- locks count, and a lock taken twice would outlive one Release.
-- MATERIALIZED: each lock is tried exactly once, after that filter.
WITH want AS MATERIALIZED (
    SELECT pt.part AS p FROM {{table}}_partitions pt
    WHERE pt.part = ANY (@parts::text::int[]) AND pt.owner IS DISTINCT FROM @token
), t AS MATERIALIZED (
    SELECT p FROM want WHERE pg_try_advisory_lock(@part_ns::int, p)
)
UPDATE {{table}}_partitions pt SET owner = @token, epoch = pt.epoch + 1, taken_at = @now, expires_at = NULL
FROM t WHERE pt.part = t.p
RETURNING pt.part
