-- Time-critical due rows of @parts whose aggregate has no earlier pending row
-- or block or hold. The @window over critical_idx bounds the work when many wait
-- behind earlier rows. The last column is the number of candidates in the
-- window (dialects.CriticalResult.Candidates): more than the rows returned
-- when some wait behind earlier rows, which the relay's read lane then
-- publishes. The window holds only seqs; the rows are joined back by
-- primary key.
-- A row never tried and not scheduled (attempts 0, no deliver_at) was due
-- at its insert, before its commit, so it is due once visible whatever
-- @now says: @now is the relay's idea of the database's clock, which lags
-- it by up to a round trip, and a wake's read must not miss the row whose
-- commit sent the wake.
WITH c AS (
    SELECT w.seq FROM {{table}} w
    WHERE w.state = 0 AND w.critical
      AND +w.part IN (SELECT value FROM json_each(@parts))
      AND (w.next_attempt_at <= @now OR (w.attempts = 0 AND w.deliver_at IS NULL))
    ORDER BY w.seq
    LIMIT @window
)
SELECT {{record_columns}}, (SELECT COUNT(*) FROM c) AS candidates
FROM c JOIN {{table}} o ON o.seq = c.seq
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
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_held h
      WHERE h.part = o.part AND h.aggregate_type = o.aggregate_type AND h.aggregate_id = o.aggregate_id
        AND h.seq < o.seq AND h.until > @now
  )
ORDER BY o.seq
LIMIT @limit
