-- table: outbox
SELECT /* {{watch}} */ CASE
    WHEN (SELECT COALESCE(GROUP_CONCAT(r.id ORDER BY r.id), '') FROM outbox_relays r
          WHERE IS_USED_LOCK(CONCAT(?, r.id)) IS NOT NULL) = ?
    THEN GET_LOCK(?, ?)
    ELSE -1
END
-- table: app.jit_outbox
SELECT /* {{watch}} */ CASE
    WHEN (SELECT COALESCE(GROUP_CONCAT(r.id ORDER BY r.id), '') FROM app.jit_outbox_relays r
          WHERE IS_USED_LOCK(CONCAT(?, r.id)) IS NOT NULL) = ?
    THEN GET_LOCK(?, ?)
    ELSE -1
END
