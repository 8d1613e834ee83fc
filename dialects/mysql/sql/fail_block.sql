-- Blocks an aggregate behind a failed row (run after fail.sql changed it),
-- keeping an existing block on an earlier row. MySQL applies the
-- assignments left to right: seq is compared before it is replaced.
-- Args: partition, aggregate type, aggregate id, seq, dead, until.
INSERT INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`)
VALUES (?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
    dead = IF(seq >= VALUES(seq), VALUES(dead), dead),
    `until` = IF(seq >= VALUES(seq), VALUES(`until`), `until`),
    seq = IF(seq >= VALUES(seq), VALUES(seq), seq)
