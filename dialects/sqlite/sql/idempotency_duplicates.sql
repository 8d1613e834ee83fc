-- Keys shared by several rows: migration 003 refuses to index over them.
SELECT idempotency_key, COUNT(*) AS n
FROM {{table}}
WHERE idempotency_key IS NOT NULL
GROUP BY idempotency_key
HAVING COUNT(*) > 1
ORDER BY n DESC, idempotency_key
