-- PastRetention: published rows published before @before (now - retention,
-- unix microseconds), counted up to @cap (dialects.PastRetentionCap + 1)
-- entries of the partial cleanup index (published_at WHERE state = 1), so the
-- cost is bounded by the cap, not by the rows kept. The ORDER BY makes the
-- plan walk that index from its oldest entry. dialects/sqlite's TestStatsCost
-- checks the plan and the statements.
SELECT count(*) FROM (
    SELECT 1 FROM {{table}} WHERE state = 1 AND published_at < @before ORDER BY published_at LIMIT @cap
)
