-- The main database file ('' in memory): WaitChange watches its size and
-- mtime (and its WAL's) to read the live relays only after a write.
SELECT file FROM pragma_database_list WHERE name = 'main'
