-- table: outbox
INSERT INTO outbox_held AS h (part, aggregate_type, aggregate_id, seq, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, min(o.seq), max(o.deliver_at)
FROM outbox o
WHERE o.id IN (SELECT unnest($1::text::uuid[]))
GROUP BY o.part, o.aggregate_type, o.aggregate_id
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = CASE WHEN h.until <= now() THEN excluded.seq ELSE least(h.seq, excluded.seq) END,
    until = CASE WHEN h.until <= now() THEN excluded.until ELSE greatest(h.until, excluded.until) END
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_held AS h (part, aggregate_type, aggregate_id, seq, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, min(o.seq), max(o.deliver_at)
FROM app.jit_outbox o
WHERE o.id IN (SELECT unnest($1::text::uuid[]))
GROUP BY o.part, o.aggregate_type, o.aggregate_id
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = CASE WHEN h.until <= now() THEN excluded.seq ELSE least(h.seq, excluded.seq) END,
    until = CASE WHEN h.until <= now() THEN excluded.until ELSE greatest(h.until, excluded.until) END
