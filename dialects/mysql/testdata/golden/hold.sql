-- table: outbox
INSERT INTO outbox_held (part, aggregate_type, aggregate_id, seq, `until`)
SELECT g.p, g.t, g.a, g.s, g.u FROM (
    SELECT o.part AS p, o.aggregate_type AS t, o.aggregate_id AS a, MIN(o.seq) AS s, MAX(o.deliver_at) AS u
    FROM outbox o
    WHERE o.id IN (?, ?)
    GROUP BY o.part, o.aggregate_type, o.aggregate_id
) g
ON DUPLICATE KEY UPDATE
    seq = IF(`until` <= UTC_TIMESTAMP(6), VALUES(seq), LEAST(seq, VALUES(seq))),
    `until` = IF(`until` <= UTC_TIMESTAMP(6), VALUES(`until`), GREATEST(`until`, VALUES(`until`)))
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_held (part, aggregate_type, aggregate_id, seq, `until`)
SELECT g.p, g.t, g.a, g.s, g.u FROM (
    SELECT o.part AS p, o.aggregate_type AS t, o.aggregate_id AS a, MIN(o.seq) AS s, MAX(o.deliver_at) AS u
    FROM app.jit_outbox o
    WHERE o.id IN (?, ?)
    GROUP BY o.part, o.aggregate_type, o.aggregate_id
) g
ON DUPLICATE KEY UPDATE
    seq = IF(`until` <= UTC_TIMESTAMP(6), VALUES(seq), LEAST(seq, VALUES(seq))),
    `until` = IF(`until` <= UTC_TIMESTAMP(6), VALUES(`until`), GREATEST(`until`, VALUES(`until`)))
