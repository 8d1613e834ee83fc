-- Registers a relay session with a lease. ?1 token, ?2 relay name, ?3 now,
-- ?4 lease end.
INSERT INTO {{table}}_relays (token, name, started_at, expires_at) VALUES (?1, ?2, ?3, ?4)
