-- table: outbox
UPDATE outbox t JOIN outbox_partitions p ON p.part = t.part
SET t.attempts = t.attempts + 1, t.last_error = ?, t.next_attempt_at = ?, t.state = ?
WHERE t.seq = ? AND t.part = ? AND t.state = 0 AND p.owner = ?
-- table: app.jit_outbox
UPDATE app.jit_outbox t JOIN app.jit_outbox_partitions p ON p.part = t.part
SET t.attempts = t.attempts + 1, t.last_error = ?, t.next_attempt_at = ?, t.state = ?
WHERE t.seq = ? AND t.part = ? AND t.state = 0 AND p.owner = ?
