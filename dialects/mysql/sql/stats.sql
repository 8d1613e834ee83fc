-- Stats: each part reads an index or a small table, never the published
-- rows one by one, so a scrape costs time bounded by the pending and dead
-- rows and the blocked aggregates, not by the rows kept for Retention:
--   pending count and oldest created_at: the pending rows, through the
--     claim index (state, seq);
--   dead count: the claim index's state = 2 range;
--   published count: at most @cap entries of the cleanup index (state,
--     published_at); above that the dialect estimates it from the seqs of
--     the oldest published row (first entry of the cleanup index's state =
--     1 range) and of the newest row (the primary key's last entry);
--   blocked aggregates: the blocked table (one row per blocked aggregate);
--   pending and dead rows with a partition outside [0, P): the part
--     index's (state, part) ranges below 0 and from P up.
-- Columns: see sqlkit.ReadStats. dialects/mysql's TestStatsCost checks the
-- plan.
SELECT
    (SELECT COUNT(*) FROM {{table}} WHERE state = 0),
    (SELECT MIN(created_at) FROM {{table}} WHERE state = 0),
    (SELECT COUNT(*) FROM {{table}} WHERE state = 2),
    (SELECT COUNT(*) FROM (SELECT 1 FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT @cap) k),
    (SELECT seq FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT MAX(seq) FROM {{table}}),
    (SELECT COUNT(*) FROM {{table}}_blocked WHERE dead),
    (SELECT COUNT(*) FROM {{table}}_blocked WHERE NOT dead),
    (SELECT COUNT(*) FROM {{table}} WHERE state IN (0, 2)
         AND (part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m)))
