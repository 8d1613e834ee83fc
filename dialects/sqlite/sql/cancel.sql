-- Deletes the rows @ids that are scheduled, pending, never attempted and not
-- yet due at @now, returning what cancel_holds.sql needs.
DELETE FROM {{table}}
WHERE id IN (SELECT value FROM json_each(@ids))
  AND state = 0 AND attempts = 0 AND deliver_at IS NOT NULL AND deliver_at > @now
RETURNING id, part, aggregate_type, aggregate_id
