-- Run by a session that opens: interrupts every WaitChange of this table's
-- relays (a watch connection waiting for another relay's member lock,
-- namespace @member_ns), so that they read the relays again and watch the
-- right one; without it a relay that joined is watched by nobody until the
-- others' next rebalance, and its death goes unseen that long.
SELECT count(*) FILTER (WHERE pg_cancel_backend(l.pid))
FROM pg_locks l
WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = @member_ns::int::oid
