-- Stats: each part reads an index or a small table, never the published
-- rows one by one, so a scrape costs time bounded by the pending and dead
-- rows and the blocked aggregates, not by the rows kept for Retention:
--   pending count and oldest created_at: the pending rows, through the
--     partial claim index (state = 0);
--   dead count: the partial dead index (state = 2, migration 004);
--   published count: at most @cap entries of the partial cleanup index
--     (state = 1); above that the dialect estimates it from the seqs of
--     the oldest published row (first entry of the cleanup index) and of
--     the newest row (the primary key's last entry);
--   blocked aggregates: the blocked table (one row per blocked aggregate);
--   rows with a partition outside [0, P): in the same pass over the
--     pending rows as their count, and the dead rows through the dead
--     index.
-- Columns: see sqlkit.ReadStats. dialects/postgres's TestStatsCost checks
-- the plan.
SELECT p.n, p.oldest,
    (SELECT count(*) FROM {{table}} WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT @cap) k),
    o.seq, o.published_at,
    (SELECT max(seq) FROM {{table}}),
    (SELECT count(*) FROM {{table}}_blocked WHERE dead),
    (SELECT count(*) FROM {{table}}_blocked WHERE NOT dead),
    p.bad + (SELECT count(*) FROM {{table}} WHERE state = 2
                 AND (part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m)))
FROM (SELECT count(*) AS n, min(created_at) AS oldest,
             count(*) FILTER (WHERE part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m)) AS bad
      FROM {{table}} WHERE state = 0) p
LEFT JOIN LATERAL (
    SELECT seq, published_at FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1
) o ON TRUE
