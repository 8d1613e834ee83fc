-- Ends a session, second step: deletes its relay row. ?1 token.
DELETE FROM {{table}}_relays WHERE token = ?1
