-- Takes each partition of @parts without a live owner, with a new epoch.
-- SQLite's single writer makes the check and the take atomic.
UPDATE {{table}}_partitions
SET owner = @token, epoch = epoch + 1, taken_at = @now, expires_at = @until
WHERE part IN (SELECT value FROM json_each(@parts))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= @now)
RETURNING part
