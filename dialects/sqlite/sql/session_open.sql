-- Registers relay @name's session @token at @now, with a lease until
-- @until.
INSERT INTO {{table}}_relays (token, name, started_at, expires_at) VALUES (@token, @name, @now, @until)
