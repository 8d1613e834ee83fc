-- One row of insert.sql.
(@id, @aggregate_type, @aggregate_id, @event_type, @payload, @content_type, @headers, @idempotency_key, @critical, @created_at, @next_attempt_at, @deliver_at, @part)
