-- Records an applied migration: version, name, applied at.
INSERT INTO {{table}}_migrations (version, name, applied_at) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE version = version
