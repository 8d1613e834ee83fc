-- On a watch connection: waits up to @timeout seconds for the member lock
-- @name of a relay's session. The relay after the caller in the ring: free
-- once that relay is gone. The caller's own, when it is alone: its session
-- connection holds it, so the wait is granted only if that connection died.
-- It first checks that the live relays are still those of the caller's view
-- (@live: their ids, sorted, comma-separated; a relay is live while its
-- member lock, named @member_prefix + id, is held), and returns -1 at once
-- when not: a relay that joined after the view was read is seen even if its
-- kick came before this wait. Returns 1 when taken (then free it with
-- session_wait_release.sql), 0 on timeout, NULL when a joining relay
-- interrupted it (session_kick.sql finds it by the {{watch}} comment: the
-- table's lock prefix, as the processlist shows a prepared statement's text
-- without its arguments, from the statement's start: a kick during the check
-- interrupts it too).
SELECT /* {{watch}} */ CASE
    WHEN (SELECT COALESCE(GROUP_CONCAT(r.id ORDER BY r.id), '') FROM {{table}}_relays r
          WHERE IS_USED_LOCK(CONCAT(@member_prefix, r.id)) IS NOT NULL) = @live
    THEN GET_LOCK(@name, @timeout)
    ELSE -1
END
