-- table: outbox
SELECT
    (SELECT COUNT(*) FROM outbox WHERE state = 0),
    (SELECT LEAST(COALESCE(c.oldest, s.oldest), COALESCE(s.oldest, c.oldest)) FROM
        (SELECT MIN(created_at) AS oldest FROM outbox USE INDEX (outbox_claim_idx)
         WHERE state = 0 AND deliver_at IS NULL) c,
        (SELECT MIN(deliver_at) AS oldest FROM outbox WHERE deliver_at <= UTC_TIMESTAMP(6) AND state = 0) s),
    (SELECT COUNT(*) FROM outbox WHERE state = 2),
    (SELECT COUNT(*) FROM (SELECT 1 FROM outbox WHERE state = 1 ORDER BY published_at LIMIT ?) k),
    (SELECT seq FROM outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT MAX(seq) FROM outbox),
    (SELECT COUNT(*) FROM outbox_blocked WHERE dead),
    (SELECT COUNT(*) FROM outbox_blocked WHERE NOT dead),
    (SELECT COUNT(*) FROM outbox WHERE state IN (0, 2)
         AND (part < 0 OR part >= (SELECT m.partitions FROM outbox_meta m))),
    (SELECT COUNT(*) FROM outbox WHERE deliver_at > UTC_TIMESTAMP(6) AND state = 0),
    (SELECT MIN(deliver_at) FROM outbox WHERE deliver_at > UTC_TIMESTAMP(6) AND state = 0)
-- table: app.jit_outbox
SELECT
    (SELECT COUNT(*) FROM app.jit_outbox WHERE state = 0),
    (SELECT LEAST(COALESCE(c.oldest, s.oldest), COALESCE(s.oldest, c.oldest)) FROM
        (SELECT MIN(created_at) AS oldest FROM app.jit_outbox USE INDEX (jit_outbox_claim_idx)
         WHERE state = 0 AND deliver_at IS NULL) c,
        (SELECT MIN(deliver_at) AS oldest FROM app.jit_outbox WHERE deliver_at <= UTC_TIMESTAMP(6) AND state = 0) s),
    (SELECT COUNT(*) FROM app.jit_outbox WHERE state = 2),
    (SELECT COUNT(*) FROM (SELECT 1 FROM app.jit_outbox WHERE state = 1 ORDER BY published_at LIMIT ?) k),
    (SELECT seq FROM app.jit_outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT published_at FROM app.jit_outbox WHERE state = 1 ORDER BY published_at LIMIT 1),
    (SELECT MAX(seq) FROM app.jit_outbox),
    (SELECT COUNT(*) FROM app.jit_outbox_blocked WHERE dead),
    (SELECT COUNT(*) FROM app.jit_outbox_blocked WHERE NOT dead),
    (SELECT COUNT(*) FROM app.jit_outbox WHERE state IN (0, 2)
         AND (part < 0 OR part >= (SELECT m.partitions FROM app.jit_outbox_meta m))),
    (SELECT COUNT(*) FROM app.jit_outbox WHERE deliver_at > UTC_TIMESTAMP(6) AND state = 0),
    (SELECT MIN(deliver_at) FROM app.jit_outbox WHERE deliver_at > UTC_TIMESTAMP(6) AND state = 0)
