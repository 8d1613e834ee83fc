-- A relay's read of its partitions: pending, due rows in seq order, without
-- any row of an aggregate blocked by an earlier row (dead, or retrying and
-- not yet due). A plain SELECT: no lock, no write; ownership of the
-- partitions is proven by the relay's session. The unary + keeps part out
-- of index selection, so that the read walks claim_idx (pending rows in seq
-- order) and stops at the limit instead of collecting every pending row of
-- the partitions through an index on part and sorting them (checked by
-- TestReadPlan): its cost follows the
-- rows it returns and the rows of other relays' partitions it passes, not
-- the backlog.
-- A read ahead (after seq > 0, while the relay's previous batch is in
-- flight) leaves out every aggregate that still has a pending row at or
-- below that seq: such a row committed after the previous read (a lower
-- seq committing late) or is in flight, and a later row of its aggregate
-- must not go first. Reads from the start (after seq 0) need no such probe.
-- ?1 JSON array of partitions, ?2 after seq, ?3 now, ?4 limit.
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part
FROM {{table}} o
WHERE o.state = 0
  AND +o.part IN (SELECT value FROM json_each(?1))
  AND o.seq > ?2
  AND o.next_attempt_at <= ?3
  AND NOT EXISTS (
      SELECT 1 FROM {{table}}_blocked b
      WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
        AND b.seq < o.seq AND (b.dead OR b.until > ?3)
  )
  AND (?2 = 0 OR NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
        AND e.state = 0 AND e.seq <= ?2
  ))
ORDER BY o.seq
LIMIT ?4
