-- Args: version, name, applied at.
INSERT INTO {{prefix}}_migrations (version, name, applied_at) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE version = version
