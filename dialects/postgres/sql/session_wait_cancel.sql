-- Cancels the statement of a watch connection's backend (@pid) whose
-- WaitChange context ended: repeated until that statement returns, as a
-- cancel that reaches the backend before its statement does is dropped.
SELECT pg_cancel_backend(@pid)
