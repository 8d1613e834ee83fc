-- Serialises Migrate calls (MySQL DDL is not transactional). Args: lock
-- name, timeout in seconds.
SELECT GET_LOCK(?, ?)
