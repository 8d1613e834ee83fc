-- table: outbox
UPDATE outbox SET part = ?1 WHERE seq IN (SELECT value FROM json_each(?2))
-- table: jit_outbox
UPDATE jit_outbox SET part = ?1 WHERE seq IN (SELECT value FROM json_each(?2))
