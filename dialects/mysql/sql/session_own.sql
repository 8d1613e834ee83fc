-- Records @token as owner of the partitions @parts, whose locks it just
-- took (session_take.sql), with a new epoch, taken at @now.
UPDATE {{table}}_partitions SET owner = @token, epoch = epoch + 1, taken_at = @now, expires_at = NULL
WHERE part IN (@parts...)
