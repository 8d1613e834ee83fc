-- Registers a relay session with a lease until @until.
INSERT INTO {{table}}_relays (token, name, started_at, expires_at) VALUES (@token, @name, @now, @until)
