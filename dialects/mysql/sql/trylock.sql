-- TryLock step 2: takes lease @name for @owner until @until, if it is
-- free, ran out by @now or is already @owner's.
UPDATE {{table}}_locks SET owner = @owner, locked_until = @until
WHERE name = @name AND (owner IS NULL OR owner = @owner OR locked_until IS NULL OR locked_until <= @now)
