-- table: outbox
SELECT
    (SELECT count(*) FROM outbox WHERE state = 0),
    (SELECT min(coalesce(c.oldest, s.oldest), coalesce(s.oldest, c.oldest)) FROM
        (SELECT min(created_at) AS oldest FROM outbox WHERE state = 0 AND deliver_at IS NULL) c,
        (SELECT min(deliver_at) AS oldest FROM outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at <= ?1) s),
    (SELECT count(*) FROM outbox WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM outbox WHERE state = 1 ORDER BY published_at LIMIT ?2)),
    (SELECT seq FROM outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT max(seq) FROM outbox),
    (SELECT count(*) FROM outbox_blocked WHERE dead),
    (SELECT count(*) FROM outbox_blocked WHERE NOT dead),
    (SELECT count(*) FROM outbox WHERE state = 0
         AND (part < 0 OR part >= (SELECT m.partitions FROM outbox_meta m)))
    + (SELECT count(*) FROM outbox WHERE state = 2
         AND (part < 0 OR part >= (SELECT m.partitions FROM outbox_meta m))),
    (SELECT count(*) FROM outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > ?1),
    (SELECT min(deliver_at) FROM outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > ?1)
-- table: jit_outbox
SELECT
    (SELECT count(*) FROM jit_outbox WHERE state = 0),
    (SELECT min(coalesce(c.oldest, s.oldest), coalesce(s.oldest, c.oldest)) FROM
        (SELECT min(created_at) AS oldest FROM jit_outbox WHERE state = 0 AND deliver_at IS NULL) c,
        (SELECT min(deliver_at) AS oldest FROM jit_outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at <= ?1) s),
    (SELECT count(*) FROM jit_outbox WHERE state = 2),
    (SELECT count(*) FROM (SELECT 1 FROM jit_outbox WHERE state = 1 ORDER BY published_at LIMIT ?2)),
    (SELECT seq FROM jit_outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM jit_outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT max(seq) FROM jit_outbox),
    (SELECT count(*) FROM jit_outbox_blocked WHERE dead),
    (SELECT count(*) FROM jit_outbox_blocked WHERE NOT dead),
    (SELECT count(*) FROM jit_outbox WHERE state = 0
         AND (part < 0 OR part >= (SELECT m.partitions FROM jit_outbox_meta m)))
    + (SELECT count(*) FROM jit_outbox WHERE state = 2
         AND (part < 0 OR part >= (SELECT m.partitions FROM jit_outbox_meta m))),
    (SELECT count(*) FROM jit_outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > ?1),
    (SELECT min(deliver_at) FROM jit_outbox WHERE state = 0 AND deliver_at IS NOT NULL AND deliver_at > ?1)
