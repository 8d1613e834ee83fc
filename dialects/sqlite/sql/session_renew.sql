-- Renews the relay session's own lease: ?1 token, ?2 lease end. No row
-- changed: the session was forgotten (its lease ran out).
UPDATE {{table}}_relays SET expires_at = ?2 WHERE token = ?1
