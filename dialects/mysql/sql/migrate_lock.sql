-- Serialises concurrent Migrate calls, on Migrate's connection (MySQL DDL
-- is not transactional). Not part of Schema(). Args: lock name, timeout
-- in seconds. Returns 1 when taken.
SELECT GET_LOCK(?, ?)
