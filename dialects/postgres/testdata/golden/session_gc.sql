-- table: outbox
DELETE FROM outbox_relays r
WHERE r.started_at < $1
  AND NOT EXISTS (
      SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = $2::int::oid AND l.objid = (r.id % 2147483647)::int::oid
  )
-- table: app.jit_outbox
DELETE FROM app.jit_outbox_relays r
WHERE r.started_at < $1
  AND NOT EXISTS (
      SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = $2::int::oid AND l.objid = (r.id % 2147483647)::int::oid
  )
