-- The watch connection's backend pid, for session_wait_cancel.sql.
SELECT pg_backend_pid()
