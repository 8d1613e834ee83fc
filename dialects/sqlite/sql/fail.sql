-- Records failed attempts on rows of partitions @token owns; returns the
-- seqs changed, which alone fail_block.sql may block.
UPDATE {{table}} AS t
SET attempts = t.attempts + 1, last_error = f.err, next_attempt_at = f.next,
    state = CASE WHEN f.dead THEN 2 ELSE 0 END
FROM (
    SELECT json_extract(value, '$.seq') AS seq, json_extract(value, '$.err') AS err,
           json_extract(value, '$.next') AS next, json_extract(value, '$.dead') AS dead
    FROM json_each(@failures)
) AS f
WHERE t.seq = f.seq AND t.state = 0
  AND t.part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = @token)
RETURNING seq
