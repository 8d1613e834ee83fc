-- Registers relay @name's session @token at @now, in a transaction on the
-- session's connection that also takes its member lock (session_lock.sql)
-- before COMMIT: the row is never visible without its lock held.
INSERT INTO {{table}}_relays (token, name, started_at) VALUES (@token, @name, @now)
