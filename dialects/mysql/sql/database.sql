-- The connection's current database: with the table name, it names the
-- table's GET_LOCK locks, which are server-wide, not per database.
SELECT COALESCE(DATABASE(), '')
