-- Registers a session in a transaction that takes its member lock before
-- COMMIT: the row is never visible without its lock.
INSERT INTO {{table}}_relays (token, name, started_at) VALUES (@token, @name, @now)
