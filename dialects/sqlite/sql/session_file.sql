-- The main database's file ('' for an in-memory database): WaitChange
-- watches its size and modification time (and its WAL's) to read the live
-- relays only after a write.
SELECT file FROM pragma_database_list WHERE name = 'main'
