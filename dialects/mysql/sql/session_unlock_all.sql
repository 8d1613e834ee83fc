-- Ends a session, step 3: frees every GET_LOCK lock of the connection.
SELECT RELEASE_ALL_LOCKS()
