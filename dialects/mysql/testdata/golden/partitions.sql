-- table: outbox
SELECT m.partitions, (SELECT MAX(version) FROM outbox_migrations), VERSION() FROM outbox_meta m
-- table: app.jit_outbox
SELECT m.partitions, (SELECT MAX(version) FROM app.jit_outbox_migrations), VERSION() FROM app.jit_outbox_meta m
