-- table: outbox
INSERT INTO outbox_blocked AS b (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, o.seq, f.dead, f.next
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.next') AS next,
           json_extract(value, '$.dead') AS dead
    FROM json_each(?1)
) AS f
JOIN outbox o ON o.seq = f.seq
WHERE o.seq IN (SELECT value FROM json_each(?2))
ORDER BY o.seq
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = MIN(b.seq, excluded.seq),
    dead = CASE WHEN excluded.seq <= b.seq THEN excluded.dead ELSE b.dead END,
    until = MAX(b.until, excluded.until)
-- table: jit_outbox
INSERT INTO jit_outbox_blocked AS b (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, o.seq, f.dead, f.next
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.next') AS next,
           json_extract(value, '$.dead') AS dead
    FROM json_each(?1)
) AS f
JOIN jit_outbox o ON o.seq = f.seq
WHERE o.seq IN (SELECT value FROM json_each(?2))
ORDER BY o.seq
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = MIN(b.seq, excluded.seq),
    dead = CASE WHEN excluded.seq <= b.seq THEN excluded.dead ELSE b.dead END,
    until = MAX(b.until, excluded.until)
