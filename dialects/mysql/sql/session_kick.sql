-- Run by a session that opens: finds every WaitChange of this table's
-- relays (a watch connection in GET_LOCK, marked by the comment of
-- session_wait.sql), so that the new session interrupts them (KILL QUERY)
-- and they read the relays again and watch the right one; without it a
-- relay that joined is watched by nobody until the others' next
-- rebalance. @pattern: the LIKE pattern of the marker.
SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE @pattern AND ID <> CONNECTION_ID()
