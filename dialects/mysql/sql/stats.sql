-- Each part reads an index range or a small table, never the published rows,
-- so a scrape's cost follows pending and dead rows, not Retention. Above @cap
-- the published count is estimated from seqs (sqlkit.ReadStats);
-- TestStatsCost checks the plan. The scheduled rows not yet due (by the
-- server's UTC_TIMESTAMP(6)) are a range of deliver_idx; a scheduled row
-- waits from its due time. The hint keeps the oldest plain row's look on the
-- pending range of claim_idx (deliver_idx holds every plain row as NULL).
SELECT
    (SELECT COUNT(*) FROM {{table}} WHERE state = 0),
    (SELECT LEAST(COALESCE(c.oldest, s.oldest), COALESCE(s.oldest, c.oldest)) FROM
        (SELECT MIN(created_at) AS oldest FROM {{table}} USE INDEX ({{name}}_claim_idx)
         WHERE state = 0 AND deliver_at IS NULL) c,
        (SELECT MIN(deliver_at) AS oldest FROM {{table}} WHERE deliver_at <= UTC_TIMESTAMP(6) AND state = 0) s),
    (SELECT COUNT(*) FROM {{table}} WHERE state = 2),
    (SELECT COUNT(*) FROM (SELECT 1 FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT @cap) k),
    (SELECT seq FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT MAX(seq) FROM {{table}}),
    (SELECT COUNT(*) FROM {{table}}_blocked WHERE dead),
    (SELECT COUNT(*) FROM {{table}}_blocked WHERE NOT dead),
    (SELECT COUNT(*) FROM {{table}} WHERE state IN (0, 2)
         AND (part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m))),
    (SELECT COUNT(*) FROM {{table}} WHERE deliver_at > UTC_TIMESTAMP(6) AND state = 0),
    (SELECT MIN(deliver_at) FROM {{table}} WHERE deliver_at > UTC_TIMESTAMP(6) AND state = 0)
