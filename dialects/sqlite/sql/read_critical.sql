-- The relay's critical read (dialects.Dialect.ReadCritical): of the first
-- @window pending, time-critical rows due at @now of the partitions @parts in
-- seq order (critical_idx, migration critical_index), those whose
-- aggregate has no earlier pending row (aggregate_idx) and no block on an
-- earlier row, in seq order, up to @limit. The window bounds the work when
-- many time-critical rows wait behind earlier rows of their aggregates:
-- each candidate costs two index probes, and the rows past the window are
-- left to the relay's read. The unary + keeps part out of index selection
-- (see read.sql). The last column (0) stands for the horizon a read
-- returns.
SELECT {{record_columns}}, 0 AS horizon
FROM (
    SELECT w.* FROM {{table}} w
    WHERE w.state = 0 AND w.critical
      AND +w.part IN (SELECT value FROM json_each(@parts))
      AND w.next_attempt_at <= @now
    ORDER BY w.seq
    LIMIT @window
) o
WHERE NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.state = 0 AND e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.seq < o.seq
  )
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > @now)
  )
ORDER BY o.seq
LIMIT @limit
