-- One row of insert.sql; text casts let every driver bind plain strings.
-- Due at the database's now(), or for a scheduled row (@delay set, in
-- microseconds, and/or @not_before) at deliver_at: the later of now() +
-- delay and not_before. A name appears once in a row: deliver_at gets the
-- same values again as @deliver_delay and @deliver_not_before.
(@id::text::uuid, @aggregate_type, @aggregate_id, @event_type, @payload, @payload_json::text::json, @content_type, @headers::text::json, @idempotency_key, @critical, @created_at,
 GREATEST(now() + @delay::bigint * interval '1 microsecond', @not_before::timestamptz, now()),
 GREATEST(now() + @deliver_delay::bigint * interval '1 microsecond', @deliver_not_before::timestamptz), @part::integer)
