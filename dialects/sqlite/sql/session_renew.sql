-- Renews the relay row of a session that owns no partition; no row changed
-- means it was forgotten, and the session registers again.
UPDATE {{table}}_relays SET expires_at = @until WHERE token = @token
