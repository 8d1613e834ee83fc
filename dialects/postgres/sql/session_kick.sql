-- Run by an opening session: interrupts the table's WaitChange calls so the
-- relays watch the right neighbour; else a joiner's death goes unseen until
-- the next rebalance.
SELECT count(*) FILTER (WHERE pg_cancel_backend(l.pid))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = @member_ns::int::oid
