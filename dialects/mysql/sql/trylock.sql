-- TryLock step 2: takes lease @name if free, expired or already @owner's.
UPDATE {{table}}_locks SET owner = @owner, locked_until = @until
WHERE name = @name AND (owner IS NULL OR owner = @owner OR locked_until IS NULL OR locked_until <= @now)
