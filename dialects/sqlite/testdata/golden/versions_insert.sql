-- table: outbox
INSERT INTO outbox_migrations (version, name, applied_at) VALUES (?1, ?2, ?3) ON CONFLICT (version) DO NOTHING
-- table: jit_outbox
INSERT INTO jit_outbox_migrations (version, name, applied_at) VALUES (?1, ?2, ?3) ON CONFLICT (version) DO NOTHING
