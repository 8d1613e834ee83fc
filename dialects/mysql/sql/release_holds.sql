-- Deletes up to @limit holds that ended before @now and whose aggregate has
-- no pending row left (a new scheduled row replaces an ended hold anyway).
-- The derived table is materialized (MySQL refuses a LIMIT in an IN
-- subquery); the outer until check keeps a hold a concurrent insert extended.
DELETE h FROM {{table}}_held h
JOIN (
    SELECT k.part, k.aggregate_type, k.aggregate_id FROM {{table}}_held k
    WHERE k.`until` < @now
      AND NOT EXISTS (
          SELECT 1 FROM {{table}} o
          WHERE o.state = 0 AND o.part = k.part AND o.aggregate_type = k.aggregate_type
            AND o.aggregate_id = k.aggregate_id
      )
    ORDER BY k.`until`
    LIMIT @limit
) x ON x.part = h.part AND x.aggregate_type = h.aggregate_type AND x.aggregate_id = h.aggregate_id
WHERE h.`until` < @now
