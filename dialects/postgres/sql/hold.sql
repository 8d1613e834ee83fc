-- Holds the aggregates of the ordered scheduled rows @ids, in the insert's
-- transaction: one hold per aggregate on its lowest held seq, until its
-- latest due time. A hold that ended by now() is replaced; one still
-- running is extended. The ids are joined through unnest, parsed once: as
-- `= ANY` of the cast text a plan scanning the table re-parses them per row.
INSERT INTO {{table}}_held AS h (part, aggregate_type, aggregate_id, seq, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, min(o.seq), max(o.deliver_at)
FROM {{table}} o
WHERE o.id IN (SELECT unnest(@ids::text::uuid[]))
GROUP BY o.part, o.aggregate_type, o.aggregate_id
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = CASE WHEN h.until <= now() THEN excluded.seq ELSE least(h.seq, excluded.seq) END,
    until = CASE WHEN h.until <= now() THEN excluded.until ELSE greatest(h.until, excluded.until) END
