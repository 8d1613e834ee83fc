-- table: outbox
INSERT INTO outbox_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`)
VALUES (?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
    dead = IF(seq >= VALUES(seq), VALUES(dead), dead),
    `until` = GREATEST(`until`, VALUES(`until`)),
    seq = IF(seq >= VALUES(seq), VALUES(seq), seq)
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`)
VALUES (?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
    dead = IF(seq >= VALUES(seq), VALUES(dead), dead),
    `until` = GREATEST(`until`, VALUES(`until`)),
    seq = IF(seq >= VALUES(seq), VALUES(seq), seq)
