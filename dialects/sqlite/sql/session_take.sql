-- Takes each partition of @parts (a JSON array) that has no owner or whose
-- owner's lease ran out by @now, for @token, with a new epoch and a lease
-- until @until. Returns the partitions taken. One statement: SQLite's single
-- writer makes the check and the take atomic.
UPDATE {{table}}_partitions
SET owner = @token, epoch = epoch + 1, taken_at = @now, expires_at = @until
WHERE part IN (SELECT value FROM json_each(@parts))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= @now)
RETURNING part
