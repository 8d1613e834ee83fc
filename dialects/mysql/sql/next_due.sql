-- The earliest due time after @now of the scheduled pending rows of @parts:
-- a walk of deliver_idx from @now that stops at the first row of @parts.
SELECT o.deliver_at
FROM {{table}} o
WHERE o.deliver_at > @now AND o.state = 0 AND o.part IN (@parts...)
ORDER BY o.deliver_at
LIMIT 1
