-- Serialises concurrent Migrate calls, on Migrate's connection (MySQL DDL
-- is not transactional): takes lock @name, waiting up to @timeout
-- seconds. Not part of Schema(). Returns 1 when taken.
SELECT GET_LOCK(@name, @timeout)
