-- Takes each free partition of @parts (advisory lock on the session's
-- connection: ownership dies with it). Only partitions not already owned:
-- advisory locks count, and a lock taken twice would outlive one Release.
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
