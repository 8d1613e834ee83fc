-- $1 published before, $2 limit.
DELETE FROM {{table}} WHERE seq IN (
    SELECT seq FROM {{table}} WHERE state = 1 AND published_at < $1 ORDER BY published_at LIMIT $2
)
