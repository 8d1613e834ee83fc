-- Ends a session, step 2: deletes its relay row. Args: token.
DELETE FROM {{table}}_relays WHERE token = ?
