-- table: outbox
SELECT partitions FROM outbox_meta
-- table: jit_outbox
SELECT partitions FROM jit_outbox_meta
