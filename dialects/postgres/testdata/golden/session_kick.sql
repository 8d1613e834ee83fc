-- table: outbox
SELECT count(*) FILTER (WHERE pg_cancel_backend(l.pid))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = $1::int::oid
-- table: app.jit_outbox
SELECT count(*) FILTER (WHERE pg_cancel_backend(l.pid))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = $1::int::oid
