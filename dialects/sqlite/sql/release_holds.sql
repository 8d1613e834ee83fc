-- Deletes up to @limit holds that ended before @now and whose aggregate has
-- no pending row left (a new scheduled row replaces an ended hold anyway).
DELETE FROM {{table}}_held WHERE rowid IN (
    SELECT h.rowid FROM {{table}}_held h
    WHERE h.until < @now
      AND NOT EXISTS (
          SELECT 1 FROM {{table}} o
          WHERE o.state = 0 AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
            AND o.part = h.part
      )
    ORDER BY h.until
    LIMIT @limit
)
