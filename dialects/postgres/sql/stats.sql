-- Each part reads an index or a small table, never the published rows, so a
-- scrape's cost follows pending and dead rows, not Retention. Above @cap the
-- published count is estimated from seqs (sqlkit.ReadStats); TestStatsCost
-- checks the plan. The scheduled rows not yet due (by the database's now())
-- are read through deliver_idx; a scheduled row waits from its due time.
SELECT p.n, LEAST(p.oldest, (SELECT min(deliver_at) FROM {{table}}
                           WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at <= now())),
    (SELECT count(*) FROM {{table}} WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT @cap) k),
    o.seq, o.published_at,
    (SELECT max(seq) FROM {{table}}),
    (SELECT count(*) FROM {{table}}_blocked WHERE dead),
    (SELECT count(*) FROM {{table}}_blocked WHERE NOT dead),
    p.bad + (SELECT count(*) FROM {{table}} WHERE state = 2
                 AND (part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m))),
    (SELECT count(*) FROM {{table}} WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > now()),
    (SELECT min(deliver_at) FROM {{table}} WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > now())
FROM (SELECT count(*) AS n, min(created_at) FILTER (WHERE deliver_at IS NULL) AS oldest,
             count(*) FILTER (WHERE part < 0 OR part >= (SELECT m.partitions FROM {{table}}_meta m)) AS bad
      FROM {{table}} WHERE state = 0) p
LEFT JOIN LATERAL (
    SELECT seq, published_at FROM {{table}} WHERE state = 1 ORDER BY published_at LIMIT 1
) o ON TRUE
