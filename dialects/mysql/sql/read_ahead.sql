-- A read ahead past @after. Only rows above @horizon are checked for a
-- pending row of their aggregate at or below @after (dialects.ReadResult.Horizon
-- says why). The @window bounds the walk when that check leaves out most
-- candidates; a short result is followed by a read from the start. The
-- window holds only seqs and the rows are joined back by primary key (as in
-- read_critical.sql: a derived table with BLOB/TEXT columns goes to disk).
SELECT {{record_columns}}, 0 AS horizon
FROM (
    SELECT w.seq FROM {{table}} w USE INDEX ({{name}}_claim_idx, {{name}}_part_idx)
    WHERE w.state = 0
      AND w.part IN (@parts...)
      AND w.seq > @after
      AND (w.next_attempt_at <= @now OR (w.attempts = 0 AND w.deliver_at IS NULL))
    ORDER BY w.seq
    LIMIT @window
) c
JOIN {{table}} o ON o.seq = c.seq
WHERE NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.`until` > @now)
  )
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_held k
      WHERE k.part = o.part AND k.aggregate_type = o.aggregate_type AND k.aggregate_id = o.aggregate_id
        AND k.seq < o.seq AND k.`until` > @now
  )
  AND (o.seq <= @horizon OR NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.state = 0 AND e.seq <= @after
  ))
ORDER BY o.seq
LIMIT @limit
