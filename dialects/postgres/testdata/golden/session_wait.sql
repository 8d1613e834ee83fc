-- table: outbox
SELECT pg_advisory_lock($1::int, $2::int), pg_advisory_unlock($1::int, $2::int)
FROM (
    SELECT COALESCE(array_agg(r.id ORDER BY r.id), '{}') AS ids FROM outbox_relays r
    WHERE EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = $1::int::oid AND l.objid = (r.id % 2147483647)::int::oid
    )
) live
WHERE live.ids = $3::text::bigint[]
-- table: app.jit_outbox
SELECT pg_advisory_lock($1::int, $2::int), pg_advisory_unlock($1::int, $2::int)
FROM (
    SELECT COALESCE(array_agg(r.id ORDER BY r.id), '{}') AS ids FROM app.jit_outbox_relays r
    WHERE EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = $1::int::oid AND l.objid = (r.id % 2147483647)::int::oid
    )
) live
WHERE live.ids = $3::text::bigint[]
