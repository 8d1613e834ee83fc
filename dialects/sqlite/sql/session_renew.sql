-- Renews until @until the relay row of session @token, which owns no
-- partition. No row changed: the row was forgotten (its lease ran out
-- long ago); the session registers it again.
UPDATE {{table}}_relays SET expires_at = @until WHERE token = @token
