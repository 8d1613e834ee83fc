-- table: outbox
SELECT part FROM outbox_partitions WHERE owner = ?
-- table: app.jit_outbox
SELECT part FROM app.jit_outbox_partitions WHERE owner = ?
