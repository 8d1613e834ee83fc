-- On a watch connection: waits for relay's member lock @name (the caller's
-- own when alone: granted only if its session connection died). -1 at once
-- when the live relays differ from @live, so a joiner that kicked before this
-- wait is seen; NULL when a kick interrupted it. The {{watch}} comment comes
-- first because the processlist shows a prepared statement's text.
SELECT /* {{watch}} */ CASE
    WHEN (SELECT COALESCE(GROUP_CONCAT(r.id ORDER BY r.id), '') FROM {{table}}_relays r
          WHERE IS_USED_LOCK(CONCAT(@member_prefix, r.id)) IS NOT NULL) = @live
    THEN GET_LOCK(@name, @timeout)
    ELSE -1
END
