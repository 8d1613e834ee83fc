-- Forgets relay sessions registered before @before whose member lock is free.
DELETE FROM {{table}}_relays r
WHERE r.started_at < @before
  AND NOT EXISTS (
      SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = @member_ns::int::oid AND l.objid = (r.id % {{member_key_mod}})::int::oid
  )
