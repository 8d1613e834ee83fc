-- On a new watch connection: its backend's pid, which session_wait_cancel.sql
-- cancels when WaitChange's context ends.
SELECT pg_backend_pid()
