-- Serialises concurrent Migrate calls, on Migrate's connection (MySQL DDL
-- is not transactional). Args: lock name, timeout in seconds. Returns 1
-- when taken. Not part of Schema().
SELECT GET_LOCK(?, ?)
