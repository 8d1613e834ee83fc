-- table: outbox
SELECT idempotency_key, COUNT(*) AS n
FROM outbox
WHERE idempotency_key IS NOT NULL
GROUP BY idempotency_key
HAVING COUNT(*) > 1
ORDER BY n DESC, idempotency_key
-- table: jit_outbox
SELECT idempotency_key, COUNT(*) AS n
FROM jit_outbox
WHERE idempotency_key IS NOT NULL
GROUP BY idempotency_key
HAVING COUNT(*) > 1
ORDER BY n DESC, idempotency_key
