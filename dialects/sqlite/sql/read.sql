-- A relay's read of its partitions @parts (a JSON array): pending rows due
-- at @now in seq order, after @after, up to @limit, without
-- any row of an aggregate blocked by an earlier row (dead, or retrying and
-- not yet due). A plain SELECT: no lock, no write; ownership of the
-- partitions is proven by the relay's session. The unary + keeps part out
-- of index selection, so that the read walks claim_idx (pending rows in seq
-- order) and stops at the limit instead of collecting every pending row of
-- the partitions through an index on part and sorting them (checked by
-- TestReadPlan): its cost follows the
-- rows it returns and the rows of other relays' partitions it passes, not
-- the backlog.
-- The last column is the read's horizon (dialects.ReadResult.Horizon): the
-- highest seq committed, the rowid b-tree's last entry, in the same
-- snapshot as the rows; 0 when a block of the partitions exists (it may
-- go while reads ahead run, and the rows behind it were not read).
-- A read ahead (after seq > 0) is read_ahead.sql.
SELECT {{record_columns}},
       CASE WHEN EXISTS (SELECT 1 FROM {{table}}_blocked k WHERE k.part IN (SELECT value FROM json_each(@parts))) THEN 0
            ELSE (SELECT MAX(h.seq) FROM {{table}} h) END AS horizon
FROM {{table}} o
WHERE o.state = 0
  AND +o.part IN (SELECT value FROM json_each(@parts))
  AND o.seq > @after
  AND o.next_attempt_at <= @now
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > @now)
  )
ORDER BY o.seq
LIMIT @limit
