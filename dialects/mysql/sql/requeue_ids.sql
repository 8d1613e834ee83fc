-- Dead rows back to pending, so each is published before the later rows
-- of its aggregate (run after skip_ids.sql, in one
-- transaction). {{ids}} expands to one ? per event id. Args: now, ids...
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = ?
WHERE state = 2 AND id IN ({{ids}})
