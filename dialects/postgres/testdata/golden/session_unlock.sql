-- table: outbox
SELECT count(*) FILTER (WHERE pg_advisory_unlock(l.classid::int, l.objid::int))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.pid = pg_backend_pid()
  AND l.classid IN ($1::int::oid, $2::int::oid)
-- table: app.jit_outbox
SELECT count(*) FILTER (WHERE pg_advisory_unlock(l.classid::int, l.objid::int))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.pid = pg_backend_pid()
  AND l.classid IN ($1::int::oid, $2::int::oid)
