-- Serialises concurrent Migrate calls on Migrate's connection (MySQL DDL is
-- not transactional). Returns 1 when taken.
SELECT GET_LOCK(@name, @timeout)
