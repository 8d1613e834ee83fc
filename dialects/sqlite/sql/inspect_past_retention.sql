-- Published rows older than @before, counted up to @cap entries of
-- cleanup_idx: the ORDER BY makes the plan walk that index from its oldest
-- entry (TestStatsCost checks the plan).
SELECT count(*) FROM (
    SELECT 1 FROM {{table}} WHERE state = 1 AND published_at < @before ORDER BY published_at LIMIT @cap
)
