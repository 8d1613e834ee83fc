-- Ends (until = now) the running holds of the cancelled rows' aggregates
-- @aggs that no other scheduled row not yet due keeps. Ended, not deleted: a
-- read ahead whose chain began before it keeps holding, and ReleaseHolds
-- deletes it once the aggregate drained.
UPDATE {{table}}_held h
SET h.`until` = UTC_TIMESTAMP(6)
WHERE (h.part, h.aggregate_type, h.aggregate_id) IN (@aggs...)
  AND h.`until` > UTC_TIMESTAMP(6)
  AND NOT EXISTS (
      SELECT 1 FROM {{table}} o
      WHERE o.part = h.part AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
        AND o.state = 0 AND o.deliver_at > UTC_TIMESTAMP(6)
  )
