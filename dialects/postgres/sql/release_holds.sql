-- Deletes up to @limit holds that ended before @now and whose aggregate has
-- no pending row left (a new scheduled row replaces an ended hold anyway).
-- The outer until check keeps a hold a concurrent insert extended.
DELETE FROM {{table}}_held h
WHERE h.until < @now
  AND (h.part, h.aggregate_type, h.aggregate_id) IN (
      SELECT k.part, k.aggregate_type, k.aggregate_id FROM {{table}}_held k
      WHERE k.until < @now
        AND NOT EXISTS (
            SELECT 1 FROM {{table}} o
            WHERE o.state = 0 AND o.part = k.part AND o.aggregate_type = k.aggregate_type
              AND o.aggregate_id = k.aggregate_id
        )
      ORDER BY k.until
      LIMIT @limit
  )
