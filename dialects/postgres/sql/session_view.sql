-- Live relay sessions and every partition's owner: kind 'r' or 'p' rows.
WITH live AS (
    SELECT r.id, r.token FROM {{table}}_relays r
    WHERE EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = @member_ns::int::oid AND l.objid = (r.id % {{member_key_mod}})::int::oid
    )
)
SELECT 'r', live.id, live.token, 0::bigint, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), p.epoch, EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM {{table}}_partitions p
