-- The earliest due time after @now of the scheduled pending rows of @parts:
-- a walk of deliver_idx from @now that stops at the first row of @parts.
SELECT o.deliver_at
FROM {{table}} o
WHERE o.state = 0 AND o.deliver_at IS NOT NULL AND o.deliver_at > @now
  AND +o.part IN (SELECT value FROM json_each(@parts))
ORDER BY o.deliver_at
LIMIT 1
