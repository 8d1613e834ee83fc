-- Ends a session, step 2: frees one hold of each advisory lock of the
-- table's namespaces (its partitions', its member lock) this connection
-- holds, and no other lock: the connection may be a Locker's, holding the
-- locks of other tables' sessions too. Reads no table, so that it also
-- runs when the outbox table is gone. Repeated until it frees none (an
-- advisory lock taken twice is held until freed twice).
SELECT count(*) FILTER (WHERE pg_advisory_unlock(l.classid::int, l.objid::int))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.pid = pg_backend_pid()
  AND l.classid IN (@part_ns::int::oid, @member_ns::int::oid)
