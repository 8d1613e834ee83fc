-- Blocks the aggregates of failed rows, in the transaction of fail.sql:
-- @blocks, a JSON array of {"seq", "next", "dead"} to block, of those among
-- @changed (a JSON array of the seqs fail.sql changed). The partition and
-- aggregate are the row's own. One block per aggregate: it stays on the
-- aggregate's earliest failed row (its dead flag is that row's), and it lasts
-- until the latest retry time of the aggregate's failed rows, so that a later
-- row backing off longer than the earliest still holds back the rows after it
-- (dialects.Dialect: a row is not read while an earlier row of its aggregate
-- is a retry not yet due).
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
