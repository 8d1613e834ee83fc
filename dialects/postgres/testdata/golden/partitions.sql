-- table: outbox
SELECT m.partitions, (SELECT max(version) FROM outbox_migrations) FROM outbox_meta m
-- table: app.jit_outbox
SELECT m.partitions, (SELECT max(version) FROM app.jit_outbox_migrations) FROM app.jit_outbox_meta m
