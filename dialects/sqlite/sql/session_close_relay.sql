-- Ends a session, step 2: deletes its relay row.
DELETE FROM {{table}}_relays WHERE token = @token
