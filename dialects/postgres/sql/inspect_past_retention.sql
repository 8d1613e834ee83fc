-- PastRetention: published rows published before @before (now - retention),
-- counted up to @cap (dialects.PastRetentionCap + 1) entries of the partial
-- cleanup index (published_at WHERE state = 1), so the cost is bounded by the
-- cap, not by the rows kept. The ORDER BY makes the plan walk that index from
-- its oldest entry. dialects/postgres's TestStatsCost checks the plan.
SELECT count(*) FROM (
    SELECT 1 FROM {{table}} WHERE state = 1 AND published_at < @before ORDER BY published_at LIMIT @cap
) k
