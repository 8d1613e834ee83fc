-- table: outbox
SELECT m.partitions, (SELECT MAX(version) FROM outbox_migrations) FROM outbox_meta m
-- table: jit_outbox
SELECT m.partitions, (SELECT MAX(version) FROM jit_outbox_migrations) FROM jit_outbox_meta m
