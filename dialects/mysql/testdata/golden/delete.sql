-- table: outbox
DELETE t FROM outbox t JOIN outbox_partitions p ON p.part = t.part
WHERE t.seq IN (?, ?) AND t.state = 0 AND p.owner = ?
-- table: app.jit_outbox
DELETE t FROM app.jit_outbox t JOIN app.jit_outbox_partitions p ON p.part = t.part
WHERE t.seq IN (?, ?) AND t.state = 0 AND p.owner = ?
