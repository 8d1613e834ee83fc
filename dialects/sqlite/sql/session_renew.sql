-- Renews the relay session's own lease: ?1 token, ?2 lease end. No row
-- changed: the row was forgotten (its lease ran out long ago); the session
-- is over.
UPDATE {{table}}_relays SET expires_at = ?2 WHERE token = ?1
