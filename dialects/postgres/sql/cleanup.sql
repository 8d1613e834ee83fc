-- Deletes up to @limit rows published before @before, the oldest first.
DELETE FROM {{table}} WHERE seq IN (
    SELECT seq FROM {{table}} WHERE state = 1 AND published_at < @before ORDER BY published_at LIMIT @limit
)
