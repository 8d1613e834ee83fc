-- table: outbox
INSERT INTO outbox_held AS h (part, aggregate_type, aggregate_id, seq, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, MIN(o.seq), MAX(o.deliver_at)
FROM outbox o
WHERE o.id IN (SELECT value FROM json_each(?1))
GROUP BY o.part, o.aggregate_type, o.aggregate_id
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = CASE WHEN h.until <= ?2 THEN excluded.seq ELSE MIN(h.seq, excluded.seq) END,
    until = CASE WHEN h.until <= ?2 THEN excluded.until ELSE MAX(h.until, excluded.until) END
-- table: jit_outbox
INSERT INTO jit_outbox_held AS h (part, aggregate_type, aggregate_id, seq, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, MIN(o.seq), MAX(o.deliver_at)
FROM jit_outbox o
WHERE o.id IN (SELECT value FROM json_each(?1))
GROUP BY o.part, o.aggregate_type, o.aggregate_id
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = CASE WHEN h.until <= ?2 THEN excluded.seq ELSE MIN(h.seq, excluded.seq) END,
    until = CASE WHEN h.until <= ?2 THEN excluded.until ELSE MAX(h.until, excluded.until) END
