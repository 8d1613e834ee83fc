-- Records @token as owner, with a new epoch, of partitions whose locks it
-- just took. FORCE INDEX keeps the update to those rows: for a long list the
-- optimizer walks the whole primary key, and in REPEATABLE READ that locks
-- every partition's row, those whose rows other relays' marks lock (shared,
-- mark.sql) in seq order: the two then deadlock, and the session or the mark
-- is rolled back.
UPDATE {{table}}_partitions FORCE INDEX (PRIMARY) SET owner = @token, epoch = epoch + 1, taken_at = @now, expires_at = NULL
WHERE part IN (@parts...)
