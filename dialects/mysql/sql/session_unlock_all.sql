-- Ends a session, step 3: frees every GET_LOCK lock the connection holds.
SELECT RELEASE_ALL_LOCKS()
