-- A relay's read ahead, while its previous batch is in flight: pending rows
-- of its partitions @parts due at @now, past that batch (seq > @after), in
-- seq order, up to @limit, leaving out blocked aggregates. A row above
-- @horizon (the read from the start's: it took its seq after that read) is
-- also left out when its aggregate has a pending row at or below @after (a
-- lower seq that committed late: it must go first); rows at or below it need
-- no such look (dialects.ReadResult.Horizon says why). It looks at a window
-- of the first @window candidates only: when that look leaves out most
-- candidates, an unbounded look would walk the whole backlog to return
-- nothing. A short or empty result is followed by a read from the start
-- (read.sql). The last column (0) stands for the horizon a read ahead does
-- not return.
SELECT {{record_columns}}, 0 AS horizon
FROM (
    SELECT w.* FROM {{table}} w USE INDEX ({{name}}_claim_idx, {{name}}_part_idx)
    WHERE w.state = 0
      AND w.part IN (@parts...)
      AND w.seq > @after
      AND w.next_attempt_at <= @now
    ORDER BY w.seq
    LIMIT @window
) o
WHERE NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.`until` > @now)
  )
  AND (o.seq <= @horizon OR NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.state = 0 AND e.seq <= @after
  ))
ORDER BY o.seq
LIMIT @limit
