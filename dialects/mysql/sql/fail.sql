-- Records one failed attempt on a pending row of a partition the token
-- owns. The fence is the row's own partition, which must be the one the
-- failure names: otherwise nothing changes and fail_block.sql is not run.
-- Args: last error, next attempt at, new state (0 or 2), seq, partition,
-- token.
UPDATE {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
SET t.attempts = t.attempts + 1, t.last_error = ?, t.next_attempt_at = ?, t.state = ?
WHERE t.seq = ? AND t.part = ? AND t.state = 0 AND p.owner = ?
