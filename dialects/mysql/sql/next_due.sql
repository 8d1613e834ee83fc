-- The earliest @limit distinct due times after @after of the scheduled
-- pending rows of @parts: a walk of deliver_idx from @after that stops at
-- the limit.
SELECT DISTINCT o.deliver_at
FROM {{table}} o
WHERE o.deliver_at > @after AND o.state = 0 AND o.part IN (@parts...)
ORDER BY o.deliver_at
LIMIT @limit
