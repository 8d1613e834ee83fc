-- Takes or renews lease @name for @owner until @until, when it is free,
-- ran out by @now or is already @owner's. Returns a row only when @owner
-- holds the lease afterwards.
INSERT INTO {{table}}_locks (name, owner, locked_until) VALUES (@name, @owner, @until)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until
WHERE {{table}}_locks.owner IS NULL OR {{table}}_locks.owner = excluded.owner
   OR {{table}}_locks.locked_until IS NULL OR {{table}}_locks.locked_until <= @now
RETURNING owner
