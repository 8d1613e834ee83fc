-- table: outbox
DELETE h FROM outbox_held h
JOIN (
    SELECT k.part, k.aggregate_type, k.aggregate_id FROM outbox_held k
    WHERE k.`until` < ?
      AND NOT EXISTS (
          SELECT 1 FROM outbox o
          WHERE o.state = 0 AND o.part = k.part AND o.aggregate_type = k.aggregate_type
            AND o.aggregate_id = k.aggregate_id
      )
    ORDER BY k.`until`
    LIMIT ?
) x ON x.part = h.part AND x.aggregate_type = h.aggregate_type AND x.aggregate_id = h.aggregate_id
WHERE h.`until` < ?
-- table: app.jit_outbox
DELETE h FROM app.jit_outbox_held h
JOIN (
    SELECT k.part, k.aggregate_type, k.aggregate_id FROM app.jit_outbox_held k
    WHERE k.`until` < ?
      AND NOT EXISTS (
          SELECT 1 FROM app.jit_outbox o
          WHERE o.state = 0 AND o.part = k.part AND o.aggregate_type = k.aggregate_type
            AND o.aggregate_id = k.aggregate_id
      )
    ORDER BY k.`until`
    LIMIT ?
) x ON x.part = h.part AND x.aggregate_type = h.aggregate_type AND x.aggregate_id = h.aggregate_id
WHERE h.`until` < ?
