-- Forgets relay sessions registered before @before whose member lock is free.
DELETE FROM {{table}}_relays
WHERE IS_USED_LOCK(CONCAT(@member_prefix, id)) IS NULL AND started_at < @before
