-- table: outbox
UPDATE outbox t JOIN outbox_partitions p ON p.part = t.part
SET t.state = 1, t.published_at = ?
WHERE t.seq IN (?, ?) AND t.state = 0 AND p.owner = ?
-- table: app.jit_outbox
UPDATE app.jit_outbox t JOIN app.jit_outbox_partitions p ON p.part = t.part
SET t.state = 1, t.published_at = ?
WHERE t.seq IN (?, ?) AND t.state = 0 AND p.owner = ?
