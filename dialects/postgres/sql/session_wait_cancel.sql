-- Repeated until the statement returns: a cancel that reaches the backend
-- before its statement does is dropped.
SELECT pg_cancel_backend(@pid)
