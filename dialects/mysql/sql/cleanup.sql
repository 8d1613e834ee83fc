-- Args: published before, limit.
DELETE FROM {{table}} WHERE state = 1 AND published_at < ? ORDER BY published_at LIMIT ?
