-- Holds the aggregates of the ordered scheduled rows @ids, in the insert's
-- transaction: one hold per aggregate on its lowest held seq, until its
-- latest due time. A hold that ended by the server's now is replaced; one
-- still running is extended. MySQL assigns left to right: seq is set while
-- `until` still holds the old value. The derived table keeps the grouped
-- columns' names apart from the held table's.
INSERT INTO {{table}}_held (part, aggregate_type, aggregate_id, seq, `until`)
SELECT g.p, g.t, g.a, g.s, g.u FROM (
    SELECT o.part AS p, o.aggregate_type AS t, o.aggregate_id AS a, MIN(o.seq) AS s, MAX(o.deliver_at) AS u
    FROM {{table}} o
    WHERE o.id IN (@ids...)
    GROUP BY o.part, o.aggregate_type, o.aggregate_id
) g
ON DUPLICATE KEY UPDATE
    seq = IF(`until` <= UTC_TIMESTAMP(6), VALUES(seq), LEAST(seq, VALUES(seq))),
    `until` = IF(`until` <= UTC_TIMESTAMP(6), VALUES(`until`), GREATEST(`until`, VALUES(`until`)))
