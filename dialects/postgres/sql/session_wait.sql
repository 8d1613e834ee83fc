-- On a watch connection: blocks until the member lock of a relay's session
-- (namespace @member_ns, its id @relay) is free, then frees it again. The
-- relay after the caller in the ring: free once that relay is gone. The
-- caller's own, when it is alone: its session connection holds it, so the
-- wait is granted only if that connection died, and a joiner's kick
-- (session_kick.sql) cancels it like any other. It first checks that the live
-- relays are still those of the caller's view (@live: their ids, an int array
-- literal, sorted) and returns no row when not: a relay that joined after the
-- view was read and kicked before this wait began is seen at once instead of
-- at the next rebalance.
SELECT pg_advisory_lock(@member_ns::int, @relay::int), pg_advisory_unlock(@member_ns::int, @relay::int)
FROM (
    SELECT COALESCE(array_agg(r.id ORDER BY r.id), '{}') AS ids FROM {{table}}_relays r
    WHERE EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = @member_ns::int::oid AND l.objid = (r.id % {{member_key_mod}})::int::oid
    )
) live
WHERE live.ids = @live::text::bigint[]
