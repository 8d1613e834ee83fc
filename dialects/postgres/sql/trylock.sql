-- Takes or renews lease @name for @owner when free, expired or already its.
-- Returns a row only when @owner holds it afterwards.
INSERT INTO {{table}}_locks AS l (name, owner, locked_until) VALUES (@name, @owner, @until)
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until
WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner OR l.locked_until IS NULL OR l.locked_until <= @now
RETURNING owner
