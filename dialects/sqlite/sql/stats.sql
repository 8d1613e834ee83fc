-- Each part reads an index or a small table, never the published rows, so a
-- scrape's cost follows pending and dead rows, not Retention. Above @cap the
-- published count is estimated from seqs (sqlkit.ReadStats); TestStatsCost
-- checks the plan. @now is the process's clock, SQLite's own: the last two
-- read the scheduled rows not yet due through deliver_idx; a scheduled row
-- waits from its due time.
SELECT
    (SELECT count(*) FROM {{table}} WHERE state = 0),
    (SELECT min(coalesce(c.oldest, s.oldest), coalesce(s.oldest, c.oldest)) FROM
        (SELECT min(created_at) AS oldest FROM {{table}} WHERE state = 0 AND deliver_at IS NULL) c,
        (SELECT min(deliver_at) AS oldest FROM {{table}} WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at <= @now) s),
    (SELECT count(*) FROM {{table}} WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT @cap)),
    (SELECT seq FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT max(seq) FROM {{table}}),
    (SELECT count(*) FROM {{table}}_blocked WHERE dead),
    (SELECT count(*) FROM {{table}}_blocked WHERE NOT dead),
    (SELECT count(*) FROM {{table}} WHERE state = 0
         AND (part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m)))
    + (SELECT count(*) FROM {{table}} WHERE state = 2
         AND (part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m))),
    (SELECT count(*) FROM {{table}} WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > @now),
    (SELECT min(deliver_at) FROM {{table}} WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > @now)
