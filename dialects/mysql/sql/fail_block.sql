-- Blocks the failed row's aggregate. One block per aggregate: it stays on the
-- earliest failed row and lasts until the latest retry behind it, so no later
-- row overtakes one still backing off. MySQL assigns left to right: seq is
-- compared before it is replaced.
INSERT INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, `until`)
VALUES (@part, @aggregate_type, @aggregate_id, @seq, @dead, @until)
ON DUPLICATE KEY UPDATE
    dead = IF(seq >= VALUES(seq), VALUES(dead), dead),
    `until` = GREATEST(`until`, VALUES(`until`)),
    seq = IF(seq >= VALUES(seq), VALUES(seq), seq)
