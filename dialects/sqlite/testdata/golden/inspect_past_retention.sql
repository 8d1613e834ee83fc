-- table: outbox
SELECT count(*) FROM (
    SELECT 1 FROM outbox WHERE state = 1 AND published_at < ?1 ORDER BY published_at LIMIT ?2
)
-- table: jit_outbox
SELECT count(*) FROM (
    SELECT 1 FROM jit_outbox WHERE state = 1 AND published_at < ?1 ORDER BY published_at LIMIT ?2
)
