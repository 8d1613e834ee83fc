-- table: outbox
SELECT idempotency_key, COUNT(*) AS n
FROM outbox
WHERE idempotency_key IS NOT NULL
GROUP BY idempotency_key
HAVING COUNT(*) > 1
ORDER BY n DESC, idempotency_key
-- table: app.jit_outbox
SELECT idempotency_key, COUNT(*) AS n
FROM app.jit_outbox
WHERE idempotency_key IS NOT NULL
GROUP BY idempotency_key
HAVING COUNT(*) > 1
ORDER BY n DESC, idempotency_key
