-- table: outbox
UPDATE outbox_partitions FORCE INDEX (PRIMARY) SET owner = NULL WHERE owner = ? AND part IN (?, ?)
-- table: app.jit_outbox
UPDATE app.jit_outbox_partitions FORCE INDEX (PRIMARY) SET owner = NULL WHERE owner = ? AND part IN (?, ?)
