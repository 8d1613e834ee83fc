-- Locks the rows @ids that are scheduled, pending, never attempted and not
-- yet due by the server's clock: the ones cancel_delete.sql deletes in the
-- same transaction (MySQL has no DELETE ... RETURNING).
SELECT o.id, o.part, o.aggregate_type, o.aggregate_id
FROM {{table}} o
WHERE o.id IN (@ids...)
  AND o.state = 0 AND o.attempts = 0 AND o.deliver_at > UTC_TIMESTAMP(6)
FOR UPDATE
