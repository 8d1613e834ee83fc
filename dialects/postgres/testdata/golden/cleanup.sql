-- table: outbox
DELETE FROM outbox WHERE seq IN (
    SELECT seq FROM outbox WHERE state = 1 AND published_at < $1 ORDER BY published_at LIMIT $2
)
-- table: app.jit_outbox
DELETE FROM app.jit_outbox WHERE seq IN (
    SELECT seq FROM app.jit_outbox WHERE state = 1 AND published_at < $1 ORDER BY published_at LIMIT $2
)
