-- Takes or renews lease @name for @owner when free, expired or already its.
-- Returns a row only when @owner holds it afterwards.
INSERT INTO {{table}}_locks (name, owner, locked_until) VALUES (@name, @owner, @until)
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, locked_until = excluded.locked_until
WHERE {{table}}_locks.owner IS NULL OR {{table}}_locks.owner = excluded.owner
   OR {{table}}_locks.locked_until IS NULL OR {{table}}_locks.locked_until <= @now
RETURNING owner
