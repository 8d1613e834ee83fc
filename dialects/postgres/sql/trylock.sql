-- Takes or renews lease @name for @owner until @until, when it is free,
-- ran out by @now or is already @owner's. Returns a row only when @owner
-- holds the lease afterwards.
INSERT INTO {{table}}_locks AS l (name, owner, locked_until) VALUES (@name, @owner, @until)
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until
WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.locked_until IS NULL OR l.locked_until <= @now
RETURNING owner
