-- On a watch connection: blocks until the member lock of relay @relay is
-- free (the caller's own when alone: granted only if its session connection
-- died), then frees it. Returns no row when the live relays differ from
-- @live, so a relay that joined and kicked before this wait is seen at once.
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
