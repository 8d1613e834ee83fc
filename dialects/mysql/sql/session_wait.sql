-- On a watch connection: waits up to the timeout for the member lock of
-- another relay's session, which is free once that relay is gone. Args:
-- lock name, timeout in seconds. Returns 1 when taken (then free it with
-- session_wait_release.sql), 0 on timeout, NULL when a joining relay
-- interrupted it (session_kick.sql finds it by the {{watch}} comment: the
-- table's lock prefix, as the processlist shows a prepared statement's
-- text without its arguments).
SELECT /* {{watch}} */ GET_LOCK(?, ?)
