-- table: outbox
DELETE b FROM outbox_blocked b JOIN outbox_partitions p ON p.part = b.part
WHERE b.seq IN (?, ?) AND NOT b.dead AND p.owner = ?
-- table: app.jit_outbox
DELETE b FROM app.jit_outbox_blocked b JOIN app.jit_outbox_partitions p ON p.part = b.part
WHERE b.seq IN (?, ?) AND NOT b.dead AND p.owner = ?
