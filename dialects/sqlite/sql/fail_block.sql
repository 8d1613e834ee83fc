-- Blocks the failed rows' aggregates, in fail.sql's transaction. One block
-- per aggregate: it stays on the earliest failed row and lasts until the
-- latest retry behind it, so no later row overtakes one still backing off.
INSERT INTO {{table}}_blocked AS b (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, o.seq, f.dead, f.next
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.next') AS next,
           json_extract(value, '$.dead') AS dead
    FROM json_each(@blocks)
) AS f
JOIN {{table}} o ON o.seq = f.seq
WHERE o.seq IN (SELECT value FROM json_each(@changed))
ORDER BY o.seq
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = MIN(b.seq, excluded.seq),
    dead = CASE WHEN excluded.seq <= b.seq THEN excluded.dead ELSE b.dead END,
    until = MAX(b.until, excluded.until)
