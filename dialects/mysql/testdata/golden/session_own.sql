-- table: outbox
UPDATE outbox_partitions FORCE INDEX (PRIMARY) SET owner = ?, epoch = epoch + 1, taken_at = ?, expires_at = NULL
WHERE part IN (?, ?)
-- table: app.jit_outbox
UPDATE app.jit_outbox_partitions FORCE INDEX (PRIMARY) SET owner = ?, epoch = epoch + 1, taken_at = ?, expires_at = NULL
WHERE part IN (?, ?)
