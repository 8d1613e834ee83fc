-- table: outbox
INSERT INTO outbox_relays (token, name, started_at) VALUES (?, ?, ?)
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_relays (token, name, started_at) VALUES (?, ?, ?)
