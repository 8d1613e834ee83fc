-- table: outbox
UPDATE outbox_partitions SET owner = NULL WHERE owner = ?
-- table: app.jit_outbox
UPDATE app.jit_outbox_partitions SET owner = NULL WHERE owner = ?
