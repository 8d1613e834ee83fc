-- Ends a session, second step: deletes the relay row of @token.
DELETE FROM {{table}}_relays WHERE token = @token
