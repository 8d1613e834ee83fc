-- table: outbox
DELETE FROM outbox_relays
WHERE IS_USED_LOCK(CONCAT(?, id)) IS NULL AND started_at < ?
-- table: app.jit_outbox
DELETE FROM app.jit_outbox_relays
WHERE IS_USED_LOCK(CONCAT(?, id)) IS NULL AND started_at < ?
