-- Records one failed attempt on the pending row @seq of partition @part,
-- which @token owns: its @error, its next attempt at @next_attempt_at and
-- its new @state (0 or 2). The fence is the row's own partition, which
-- must be @part: otherwise nothing changes and fail_block.sql is not run.
UPDATE {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
SET t.attempts = t.attempts + 1, t.last_error = @error, t.next_attempt_at = @next_attempt_at, t.state = @state
WHERE t.seq = @seq AND t.part = @part AND t.state = 0 AND p.owner = @token
