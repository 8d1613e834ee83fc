-- One row of insert.sql; text casts let every driver bind plain strings.
(@id::text::uuid, @aggregate_type, @aggregate_id, @event_type, @payload, @payload_json::text::json, @content_type, @headers::text::json, @idempotency_key, @critical, @created_at, @next_attempt_at, @part::integer)
