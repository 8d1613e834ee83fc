-- table: outbox
DELETE FROM outbox_held WHERE rowid IN (
    SELECT h.rowid FROM outbox_held h
    WHERE h.until < ?1
      AND NOT EXISTS (
          SELECT 1 FROM outbox o
          WHERE o.state = 0 AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
            AND o.part = h.part
      )
    ORDER BY h.until
    LIMIT ?2
)
-- table: jit_outbox
DELETE FROM jit_outbox_held WHERE rowid IN (
    SELECT h.rowid FROM jit_outbox_held h
    WHERE h.until < ?1
      AND NOT EXISTS (
          SELECT 1 FROM jit_outbox o
          WHERE o.state = 0 AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
            AND o.part = h.part
      )
    ORDER BY h.until
    LIMIT ?2
)
