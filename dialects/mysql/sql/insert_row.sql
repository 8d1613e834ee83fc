-- One row of insert.sql. Due at the server's UTC_TIMESTAMP(6) (DATETIMEs
-- are UTC: the driver's loc), or for a scheduled row (@delay set, in
-- microseconds, and/or @not_before) at deliver_at: the later of now + delay
-- and not_before. A name appears once in a row: deliver_at gets the same
-- values again as @deliver_delay and @deliver_not_before (GREATEST is NULL
-- when an argument is: NULL for a row not scheduled).
(@id, @aggregate_type, @aggregate_id, @event_type, @payload, @content_type, @headers, @idempotency_key, @critical, @created_at,
 GREATEST(COALESCE(UTC_TIMESTAMP(6) + INTERVAL @delay MICROSECOND, UTC_TIMESTAMP(6)), COALESCE(@not_before, UTC_TIMESTAMP(6))),
 GREATEST(UTC_TIMESTAMP(6) + INTERVAL @deliver_delay MICROSECOND, COALESCE(@deliver_not_before, UTC_TIMESTAMP(6))), @part)
