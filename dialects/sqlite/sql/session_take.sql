-- Takes each partition of ?1 (JSON array) that has no owner or whose
-- owner's lease ran out by ?3, for token ?2, with a new epoch and a lease
-- until ?4. Returns the partitions taken. One statement: SQLite's single
-- writer makes the check and the take atomic.
UPDATE {{table}}_partitions
SET owner = ?2, epoch = epoch + 1, taken_at = ?3, expires_at = ?4
WHERE part IN (SELECT value FROM json_each(?1))
  AND (owner IS NULL OR expires_at IS NULL OR expires_at <= ?3)
RETURNING part
