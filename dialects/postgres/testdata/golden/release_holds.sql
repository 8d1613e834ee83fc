-- table: outbox
DELETE FROM outbox_held h
WHERE h.until < $1
  AND (h.part, h.aggregate_type, h.aggregate_id) IN (
      SELECT k.part, k.aggregate_type, k.aggregate_id FROM outbox_held k
      WHERE k.until < $1
        AND NOT EXISTS (
            SELECT 1 FROM outbox o
            WHERE o.state = 0 AND o.part = k.part AND o.aggregate_type = k.aggregate_type
              AND o.aggregate_id = k.aggregate_id
        )
      ORDER BY k.until
      LIMIT $2
  )
-- table: app.jit_outbox
DELETE FROM app.jit_outbox_held h
WHERE h.until < $1
  AND (h.part, h.aggregate_type, h.aggregate_id) IN (
      SELECT k.part, k.aggregate_type, k.aggregate_id FROM app.jit_outbox_held k
      WHERE k.until < $1
        AND NOT EXISTS (
            SELECT 1 FROM app.jit_outbox o
            WHERE o.state = 0 AND o.part = k.part AND o.aggregate_type = k.aggregate_type
              AND o.aggregate_id = k.aggregate_id
        )
      ORDER BY k.until
      LIMIT $2
  )
