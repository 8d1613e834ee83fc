-- Holds the aggregates of the ordered scheduled rows @ids, in the insert's
-- transaction: one hold per aggregate on its lowest held seq, until its
-- latest due time. A hold that ended by @now (the insert's clock) is
-- replaced; one still running is extended.
INSERT INTO {{table}}_held AS h (part, aggregate_type, aggregate_id, seq, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, MIN(o.seq), MAX(o.deliver_at)
FROM {{table}} o
WHERE o.id IN (SELECT value FROM json_each(@ids))
GROUP BY o.part, o.aggregate_type, o.aggregate_id
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = CASE WHEN h.until <= @now THEN excluded.seq ELSE MIN(h.seq, excluded.seq) END,
    until = CASE WHEN h.until <= @now THEN excluded.until ELSE MAX(h.until, excluded.until) END
