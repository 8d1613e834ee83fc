-- A relay's read of its partitions @parts: pending rows due at @now in seq
-- order, after @after (0), up to @limit, without
-- any row of an aggregate blocked by an earlier row (dead, or retrying and
-- not yet due). A plain SELECT: no lock, no write; ownership of the
-- partitions is proven by the relay's session. It walks claim_idx
-- (state, seq), or part_idx (state, part, seq) for one partition, in seq
-- order and stops at the limit, so its cost follows the rows it returns
-- and the rows of other relays' partitions it passes, not the backlog. The
-- hint keeps the optimizer off the primary key (which also walks published
-- rows).
-- The last column is the read's horizon (dialects.ReadResult.Horizon): the
-- highest seq committed, the primary key's last visible entry, read once
-- (an uncorrelated subquery) in the statement's consistent read; 0 when a
-- block of the partitions exists (it may go while reads ahead run, and the
-- rows behind it were not read).
-- A read ahead (after seq > 0) is read_ahead.sql.
SELECT {{record_columns}},
       CASE WHEN EXISTS (SELECT 1 FROM {{table}}_blocked k WHERE k.part IN (@parts...)) THEN 0
            ELSE (SELECT MAX(h.seq) FROM {{table}} h) END AS horizon
FROM {{table}} o USE INDEX ({{name}}_claim_idx, {{name}}_part_idx)
WHERE o.state = 0
  AND o.part IN (@parts...)
  AND o.seq > @after
  AND o.next_attempt_at <= @now
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.`until` > @now)
  )
ORDER BY o.seq
LIMIT @limit
