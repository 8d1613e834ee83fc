-- table: outbox
INSERT INTO outbox_relays (token, name, started_at, expires_at) VALUES (?1, ?2, ?3, ?4)
-- table: jit_outbox
INSERT INTO jit_outbox_relays (token, name, started_at, expires_at) VALUES (?1, ?2, ?3, ?4)
