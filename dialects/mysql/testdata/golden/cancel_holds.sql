-- table: outbox
UPDATE outbox_held h
SET h.`until` = UTC_TIMESTAMP(6)
WHERE (h.part, h.aggregate_type, h.aggregate_id) IN ((?, ?, ?), (?, ?, ?))
  AND h.`until` > UTC_TIMESTAMP(6)
  AND NOT EXISTS (
      SELECT 1 FROM outbox o
      WHERE o.part = h.part AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
        AND o.state = 0 AND o.deliver_at > UTC_TIMESTAMP(6)
  )
-- table: app.jit_outbox
UPDATE app.jit_outbox_held h
SET h.`until` = UTC_TIMESTAMP(6)
WHERE (h.part, h.aggregate_type, h.aggregate_id) IN ((?, ?, ?), (?, ?, ?))
  AND h.`until` > UTC_TIMESTAMP(6)
  AND NOT EXISTS (
      SELECT 1 FROM app.jit_outbox o
      WHERE o.part = h.part AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
        AND o.state = 0 AND o.deliver_at > UTC_TIMESTAMP(6)
  )
