-- table: outbox
SELECT DISTINCT o.deliver_at
FROM outbox o
WHERE o.state = 0 AND o.deliver_at IS NOT NULL AND o.deliver_at > $1
  AND o.part = ANY ($2::int[])
ORDER BY o.deliver_at
LIMIT $3
-- table: app.jit_outbox
SELECT DISTINCT o.deliver_at
FROM app.jit_outbox o
WHERE o.state = 0 AND o.deliver_at IS NOT NULL AND o.deliver_at > $1
  AND o.part = ANY ($2::int[])
ORDER BY o.deliver_at
LIMIT $3
