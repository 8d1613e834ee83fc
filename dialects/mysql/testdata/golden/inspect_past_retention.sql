-- table: outbox
SELECT COUNT(*) FROM (
    SELECT 1 FROM outbox WHERE state = 1 AND published_at < ? ORDER BY published_at LIMIT ?
) k
-- table: app.jit_outbox
SELECT COUNT(*) FROM (
    SELECT 1 FROM app.jit_outbox WHERE state = 1 AND published_at < ? ORDER BY published_at LIMIT ?
) k
