-- table: outbox
INSERT INTO outbox_locks (name) VALUES (?) ON DUPLICATE KEY UPDATE name = name
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_locks (name) VALUES (?) ON DUPLICATE KEY UPDATE name = name
