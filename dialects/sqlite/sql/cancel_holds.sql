-- Ends (until = @now) the running holds of the cancelled rows' aggregates
-- @aggs ([part, type, id] each) that no other scheduled row not yet due
-- keeps. Ended, not deleted: a read ahead whose chain began before it
-- keeps holding, and ReleaseHolds deletes it once the aggregate drained.
UPDATE {{table}}_held AS h
SET until = @now
WHERE h.until > @now
  AND EXISTS (
      SELECT 1 FROM json_each(@aggs) a
      WHERE json_extract(a.value, '$[0]') = h.part AND json_extract(a.value, '$[1]') = h.aggregate_type
        AND json_extract(a.value, '$[2]') = h.aggregate_id
  )
  AND NOT EXISTS (
      SELECT 1 FROM {{table}} o
      WHERE o.state = 0 AND o.aggregate_type = h.aggregate_type AND o.aggregate_id = h.aggregate_id
        AND o.part = h.part AND o.deliver_at IS NOT NULL AND o.deliver_at > @now
  )
