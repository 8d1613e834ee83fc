-- On a watch connection: waits up to the timeout for the member lock of
-- another relay's session, which is free once that relay is gone. Args:
-- lock name, timeout in seconds. Returns 1 when taken (then free it with
-- session_wait_release.sql), 0 on timeout.
SELECT GET_LOCK(?, ?)
