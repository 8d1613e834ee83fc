-- table: outbox
SELECT DISTINCT o.deliver_at
FROM outbox o
WHERE o.deliver_at > ? AND o.state = 0 AND o.part IN (?, ?)
ORDER BY o.deliver_at
LIMIT ?
-- table: app.jit_outbox
SELECT DISTINCT o.deliver_at
FROM app.jit_outbox o
WHERE o.deliver_at > ? AND o.state = 0 AND o.part IN (?, ?)
ORDER BY o.deliver_at
LIMIT ?
