-- table: outbox
INSERT INTO outbox_migrations (version, name, applied_at) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE version = version
-- table: app.jit_outbox
INSERT INTO app.jit_outbox_migrations (version, name, applied_at) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE version = version
