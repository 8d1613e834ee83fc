-- Run by an opening session: finds the table's WaitChange calls (by the
-- {{watch}} comment of session_wait.sql) to KILL QUERY them, so relays watch
-- the right neighbour; else a joiner goes unwatched until the next rebalance.
SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE @pattern AND ID <> CONNECTION_ID()
