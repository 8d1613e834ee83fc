-- table: outbox
SELECT part FROM outbox_partitions WHERE owner = $1
-- table: app.jit_outbox
SELECT part FROM app.jit_outbox_partitions WHERE owner = $1
