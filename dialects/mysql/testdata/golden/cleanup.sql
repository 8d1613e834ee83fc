-- table: outbox
DELETE FROM outbox WHERE state = 1 AND published_at < ? ORDER BY published_at LIMIT ?
-- table: app.jit_outbox
DELETE FROM app.jit_outbox WHERE state = 1 AND published_at < ? ORDER BY published_at LIMIT ?
