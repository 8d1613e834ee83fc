-- A relay's read from the start. Walks claim_idx, or part_idx for one
-- partition, in seq order and stops at the limit, so its cost follows the
-- rows returned, not the backlog; the hint keeps the optimizer off the
-- primary key, which also walks published rows. The last column is the
-- horizon (dialects.ReadResult.Horizon), 0 when a block of the partitions
-- exists: it may go mid-chain, and the rows behind it were not read. A hold
-- (<table>_held) leaves out the rows after an aggregate's scheduled row until
-- the hold's due time; reads ahead use the chain's @now, so it holds for the
-- whole chain.
-- A row never tried and not scheduled is due once committed, whatever @now
-- (the relay's idea of the database's clock, up to a round trip behind it).
SELECT {{record_columns}},
       CASE WHEN EXISTS (SELECT 1 FROM {{table}}_blocked k WHERE k.part IN (@parts...)) THEN 0
            ELSE (SELECT MAX(h.seq) FROM {{table}} h) END AS horizon
FROM {{table}} o USE INDEX ({{name}}_claim_idx, {{name}}_part_idx)
WHERE o.state = 0
  AND o.part IN (@parts...)
  AND o.seq > @after
  AND (o.next_attempt_at <= @now OR (o.attempts = 0 AND o.deliver_at IS NULL))
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.`until` > @now)
  )
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_held k
      WHERE k.part = o.part AND k.aggregate_type = o.aggregate_type AND k.aggregate_id = o.aggregate_id
        AND k.seq < o.seq AND k.`until` > @now
  )
ORDER BY o.seq
LIMIT @limit
