-- Registers a relay session, in a transaction on the session's connection
-- that also takes its member lock (session_lock.sql) before COMMIT: the
-- row is never visible without its lock held. Args: token, relay name,
-- now.
INSERT INTO {{table}}_relays (token, name, started_at) VALUES (?, ?, ?)
