-- table: outbox
SELECT count(*) FROM (
    SELECT 1 FROM outbox WHERE state = 1 AND published_at < $1 ORDER BY published_at LIMIT $2
) k
-- table: app.jit_outbox
SELECT count(*) FROM (
    SELECT 1 FROM app.jit_outbox WHERE state = 1 AND published_at < $1 ORDER BY published_at LIMIT $2
) k
