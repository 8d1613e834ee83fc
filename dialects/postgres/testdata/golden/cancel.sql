-- table: outbox
WITH c AS (
    DELETE FROM outbox o
    WHERE o.id IN (SELECT unnest($1::text::uuid[]))
      AND o.state = 0 AND o.attempts = 0 AND o.deliver_at IS NOT NULL AND o.deliver_at > now()
    RETURNING o.id, o.seq, o.part, o.aggregate_type, o.aggregate_id
), ended AS (
    UPDATE outbox_held h
    SET until = now()
    FROM (SELECT DISTINCT part, aggregate_type, aggregate_id FROM c) a
    WHERE h.part = a.part AND h.aggregate_type = a.aggregate_type AND h.aggregate_id = a.aggregate_id
      AND h.until > now()
      AND NOT EXISTS (
          SELECT 1 FROM outbox o
          WHERE o.state = 0 AND o.part = h.part AND o.aggregate_type = h.aggregate_type
            AND o.aggregate_id = h.aggregate_id AND o.deliver_at IS NOT NULL AND o.deliver_at > now()
            AND o.seq NOT IN (SELECT c.seq FROM c)
      )
    RETURNING 1
)
SELECT c.id::text FROM c
-- table: app.jit_outbox
WITH c AS (
    DELETE FROM app.jit_outbox o
    WHERE o.id IN (SELECT unnest($1::text::uuid[]))
      AND o.state = 0 AND o.attempts = 0 AND o.deliver_at IS NOT NULL AND o.deliver_at > now()
    RETURNING o.id, o.seq, o.part, o.aggregate_type, o.aggregate_id
), ended AS (
    UPDATE app.jit_outbox_held h
    SET until = now()
    FROM (SELECT DISTINCT part, aggregate_type, aggregate_id FROM c) a
    WHERE h.part = a.part AND h.aggregate_type = a.aggregate_type AND h.aggregate_id = a.aggregate_id
      AND h.until > now()
      AND NOT EXISTS (
          SELECT 1 FROM app.jit_outbox o
          WHERE o.state = 0 AND o.part = h.part AND o.aggregate_type = h.aggregate_type
            AND o.aggregate_id = h.aggregate_id AND o.deliver_at IS NOT NULL AND o.deliver_at > now()
            AND o.seq NOT IN (SELECT c.seq FROM c)
      )
    RETURNING 1
)
SELECT c.id::text FROM c
