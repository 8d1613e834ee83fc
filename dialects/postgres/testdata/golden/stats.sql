-- table: outbox
SELECT p.n, LEAST(p.oldest, (SELECT min(deliver_at) FROM outbox
                           WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at <= now())),
    (SELECT count(*) FROM outbox WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM outbox WHERE state = 1 ORDER BY published_at LIMIT $1) k),
    o.seq, o.published_at,
    (SELECT max(seq) FROM outbox),
    (SELECT count(*) FROM outbox_blocked WHERE dead),
    (SELECT count(*) FROM outbox_blocked WHERE NOT dead),
    p.bad + (SELECT count(*) FROM outbox WHERE state = 2
                 AND (part < 0 OR part >= (SELECT m.partitions FROM outbox_meta m))),
    (SELECT count(*) FROM outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > now()),
    (SELECT min(deliver_at) FROM outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > now())
FROM (SELECT count(*) AS n, min(created_at) FILTER (WHERE deliver_at IS NULL) AS oldest,
             count(*) FILTER (WHERE part < 0 OR part >= (SELECT m.partitions FROM outbox_meta m)) AS bad
      FROM outbox WHERE state = 0) p
LEFT JOIN LATERAL (
    SELECT seq, published_at FROM outbox WHERE state = 1 ORDER BY published_at LIMIT 1
) o ON TRUE
-- table: app.jit_outbox
SELECT p.n, LEAST(p.oldest, (SELECT min(deliver_at) FROM app.jit_outbox
                           WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at <= now())),
    (SELECT count(*) FROM app.jit_outbox WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM app.jit_outbox WHERE state = 1 ORDER BY published_at LIMIT $1) k),
    o.seq, o.published_at,
    (SELECT max(seq) FROM app.jit_outbox),
    (SELECT count(*) FROM app.jit_outbox_blocked WHERE dead),
    (SELECT count(*) FROM app.jit_outbox_blocked WHERE NOT dead),
    p.bad + (SELECT count(*) FROM app.jit_outbox WHERE state = 2
                 AND (part < 0 OR part >= (SELECT m.partitions FROM app.jit_outbox_meta m))),
    (SELECT count(*) FROM app.jit_outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > now()),
    (SELECT min(deliver_at) FROM app.jit_outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > now())
FROM (SELECT count(*) AS n, min(created_at) FILTER (WHERE deliver_at IS NULL) AS oldest,
             count(*) FILTER (WHERE part < 0 OR part >= (SELECT m.partitions FROM app.jit_outbox_meta m)) AS bad
      FROM app.jit_outbox WHERE state = 0) p
LEFT JOIN LATERAL (
    SELECT seq, published_at FROM app.jit_outbox WHERE state = 1 ORDER BY published_at LIMIT 1
) o ON TRUE
