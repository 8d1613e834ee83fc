-- A relay's read from the start. The unary + keeps part out of index
-- selection, so the read walks claim_idx in seq order and stops at the limit
-- instead of sorting the partitions' pending rows (TestReadPlan). The last
-- column is the horizon (dialects.ReadResult.Horizon), 0 when a block of the
-- partitions exists: it may go mid-chain, and the rows behind it were not read.
-- A hold (<table>_held) leaves out the rows after an aggregate's scheduled row
-- until the hold's due time; reads ahead use the chain's @now, so it holds
-- for the whole chain.
-- A row never tried and not scheduled is due once committed, whatever @now
-- (the relay's idea of the database's clock, up to a round trip behind it).
SELECT {{record_columns}},
       CASE WHEN EXISTS (SELECT 1 FROM {{table}}_blocked k WHERE k.part IN (SELECT value FROM json_each(@parts))) THEN 0
            ELSE (SELECT MAX(h.seq) FROM {{table}} h) END AS horizon
FROM {{table}} o
WHERE o.state = 0
  AND +o.part IN (SELECT value FROM json_each(@parts))
  AND o.seq > @after
  AND (o.next_attempt_at <= @now OR (o.attempts = 0 AND o.deliver_at IS NULL))
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
