-- table: outbox
UPDATE outbox SET state = 0, attempts = 0, next_attempt_at = LEAST(?, created_at)
WHERE state = 2 AND id IN (?, ?)
-- table: app.jit_outbox
UPDATE app.jit_outbox SET state = 0, attempts = 0, next_attempt_at = LEAST(?, created_at)
WHERE state = 2 AND id IN (?, ?)
