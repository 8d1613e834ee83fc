-- table: outbox
UPDATE outbox AS t
SET attempts = t.attempts + 1, last_error = f.err, next_attempt_at = f.next,
    state = CASE WHEN f.dead THEN 2 ELSE 0 END
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.err') AS err,
           json_extract(value, '$.next') AS next, json_extract(value, '$.dead') AS dead
    FROM json_each(?1)
) AS f
WHERE t.seq = f.seq AND t.state = 0
  AND t.part IN (SELECT p.part FROM outbox_partitions p WHERE p.owner = ?2)
RETURNING seq
-- table: jit_outbox
UPDATE jit_outbox AS t
SET attempts = t.attempts + 1, last_error = f.err, next_attempt_at = f.next,
    state = CASE WHEN f.dead THEN 2 ELSE 0 END
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.err') AS err,
           json_extract(value, '$.next') AS next, json_extract(value, '$.dead') AS dead
    FROM json_each(?1)
) AS f
WHERE t.seq = f.seq AND t.state = 0
  AND t.part IN (SELECT p.part FROM jit_outbox_partitions p WHERE p.owner = ?2)
RETURNING seq
