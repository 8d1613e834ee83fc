-- Deletes the rows @ids that are scheduled, pending, never attempted and not
-- yet due by now(), and ends (until = now()) the running holds of their
-- aggregates that no other scheduled row not yet due keeps. Ended, not
-- deleted: a read ahead whose chain began before it keeps holding, and
-- ReleaseHolds deletes it once the aggregate drained. The statement's
-- snapshot still sees the deleted rows: the check leaves them out by seq.
WITH c AS (
    DELETE FROM {{table}} o
    WHERE o.id IN (SELECT unnest(@ids::text::uuid[]))
      AND o.state = 0 AND o.attempts = 0 AND o.deliver_at IS NOT NULL AND o.deliver_at > now()
    RETURNING o.id, o.seq, o.part, o.aggregate_type, o.aggregate_id
), ended AS (
    UPDATE {{table}}_held h
    SET until = now()
    FROM (SELECT DISTINCT part, aggregate_type, aggregate_id FROM c) a
    WHERE h.part = a.part AND h.aggregate_type = a.aggregate_type AND h.aggregate_id = a.aggregate_id
      AND h.until > now()
      AND NOT EXISTS (
          SELECT 1 FROM {{table}} o
          WHERE o.state = 0 AND o.part = h.part AND o.aggregate_type = h.aggregate_type
            AND o.aggregate_id = h.aggregate_id AND o.deliver_at IS NOT NULL AND o.deliver_at > now()
            AND o.seq NOT IN (SELECT c.seq FROM c)
      )
    RETURNING 1
)
SELECT c.id::text FROM c
