-- Blocks the aggregates of failed rows, in the transaction of fail.sql: ?1
-- JSON array of {"seq", "next", "dead"} to block, ?2 JSON array of the seqs
-- fail.sql changed. The partition and aggregate are the row's own. An
-- existing block is replaced only by one on a row at or before its own, so
-- an aggregate's block stays on its earliest failed row.
INSERT INTO {{table}}_blocked AS b (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT o.part, o.aggregate_type, o.aggregate_id, o.seq, f.dead, f.next
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.next') AS next,
           json_extract(value, '$.dead') AS dead
    FROM json_each(?1)
) AS f
JOIN {{table}} o ON o.seq = f.seq
WHERE o.seq IN (SELECT value FROM json_each(?2))
ORDER BY o.seq
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = excluded.seq, dead = excluded.dead, until = excluded.until
WHERE b.seq >= excluded.seq
