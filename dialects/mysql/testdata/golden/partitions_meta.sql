-- table: outbox
SELECT partitions FROM outbox_meta
-- table: app.jit_outbox
SELECT partitions FROM app.jit_outbox_meta
