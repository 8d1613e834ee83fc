-- Forgets relay sessions that are gone (their member lock, named member
-- prefix + id, is free). Args: member prefix, a time before which the
-- rows were registered.
DELETE FROM {{table}}_relays
WHERE IS_USED_LOCK(CONCAT(?, id)) IS NULL AND started_at < ?
