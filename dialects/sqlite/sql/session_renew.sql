-- Renews the relay row of a session that owns no partition: ?1 token,
-- ?2 lease end. No row changed: the row was forgotten (its lease ran out
-- long ago); the session registers it again.
UPDATE {{table}}_relays SET expires_at = ?2 WHERE token = ?1
