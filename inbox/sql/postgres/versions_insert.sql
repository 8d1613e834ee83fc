-- $1 version, $2 name, $3 applied at.
INSERT INTO {{prefix}}_migrations (version, name, applied_at) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING
