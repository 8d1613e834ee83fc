-- Blocks the aggregate @aggregate_type, @aggregate_id of partition @part
-- behind the failed row @seq (run after fail.sql changed it), @dead or
-- until @until.
-- One block per aggregate: it stays on the earliest failed row, and lasts
-- until the latest retry of the rows that failed behind it, so that a later
-- row never overtakes an earlier one still backing off. MySQL applies the
-- assignments left to right: seq is compared before it is replaced.
INSERT INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`)
VALUES (@part, @aggregate_type, @aggregate_id, @seq, @dead, @until)
ON DUPLICATE KEY UPDATE
    dead = IF(seq >= VALUES(seq), VALUES(dead), dead),
    `until` = GREATEST(`until`, VALUES(`until`)),
    seq = IF(seq >= VALUES(seq), VALUES(seq), seq)
