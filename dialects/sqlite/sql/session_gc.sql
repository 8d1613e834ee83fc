-- Forgets relay sessions whose lease ran out before ?1.
DELETE FROM {{table}}_relays WHERE expires_at < ?1
