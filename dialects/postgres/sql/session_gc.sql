-- Forgets relay sessions that are gone (their member lock is free). $1
-- member namespace, $2 a time before which the rows were registered.
DELETE FROM {{table}}_relays r
WHERE r.started_at < $2
  AND NOT EXISTS (
      SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = $1::int::oid AND l.objid = (r.id % 2147483647)::int::oid
  )
