-- Unique idempotency keys (SQLSTATE 23505, reported as
-- ErrDuplicateIdempotencyKey). The Go step refuses existing duplicates; the
-- build locks writes (inside Migrate's transaction: not CONCURRENTLY).
-- step: check-idempotency-keys
CREATE UNIQUE INDEX IF NOT EXISTS {{name}}_idempotency_key_idx ON {{table}} (idempotency_key) WHERE idempotency_key IS NOT NULL;
