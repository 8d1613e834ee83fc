-- The current database: GET_LOCK names are server-wide, so lock names
-- include it.
SELECT COALESCE(DATABASE(), '')
