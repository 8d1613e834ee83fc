-- Records @token as owner, with a new epoch, of partitions whose locks it
-- just took.
UPDATE {{table}}_partitions SET owner = @token, epoch = epoch + 1, taken_at = @now, expires_at = NULL
WHERE part IN (@parts...)
