-- table: outbox
WITH live AS (
    SELECT r.id, r.token, r.name, r.started_at FROM outbox_relays r
    WHERE EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = $1::int::oid AND l.objid = (r.id % 2147483647)::int::oid
    )
)
SELECT 'r', live.id, live.token, live.name, live.started_at, 0::bigint, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), '', p.taken_at, p.epoch,
       EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM outbox_partitions p
-- table: app.jit_outbox
WITH live AS (
    SELECT r.id, r.token, r.name, r.started_at FROM app.jit_outbox_relays r
    WHERE EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = $1::int::oid AND l.objid = (r.id % 2147483647)::int::oid
    )
)
SELECT 'r', live.id, live.token, live.name, live.started_at, 0::bigint, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), '', p.taken_at, p.epoch,
       EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM app.jit_outbox_partitions p
