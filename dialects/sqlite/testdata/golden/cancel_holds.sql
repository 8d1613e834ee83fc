-- table: outbox
UPDATE outbox_held AS h
SET until = ?1
WHERE h.until > ?1
  AND EXISTS (
      SELECT 1 FROM json_each(?2) a
      WHERE json_extract(a.value, '$[0]') = h.part AND json_extract(a.value, '$[1]') = h.aggregate_type
        AND json_extract(a.value, '$[2]') = h.aggregate_id
  )
  AND NOT EXISTS (
      SELECT 1 FROM outbox o
      WHERE o.state = 0 AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
        AND o.part = h.part AND o.deliver_at IS NOT NULL AND o.deliver_at > ?1
  )
-- table: jit_outbox
UPDATE jit_outbox_held AS h
SET until = ?1
WHERE h.until > ?1
  AND EXISTS (
      SELECT 1 FROM json_each(?2) a
      WHERE json_extract(a.value, '$[0]') = h.part AND json_extract(a.value, '$[1]') = h.aggregate_type
        AND json_extract(a.value, '$[2]') = h.aggregate_id
  )
  AND NOT EXISTS (
      SELECT 1 FROM jit_outbox o
      WHERE o.state = 0 AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
        AND o.part = h.part AND o.deliver_at IS NOT NULL AND o.deliver_at > ?1
  )
