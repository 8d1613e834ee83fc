-- Records one failed attempt, fenced by the row's own partition: when @token
-- does not own @part nothing changes and fail_block.sql is not run.
UPDATE {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
SET t.attempts = t.attempts + 1, t.last_error = @error, t.next_attempt_at = @next_attempt_at, t.state = @state
WHERE t.seq = @seq AND t.part = @part AND t.state = 0 AND p.owner = @token
