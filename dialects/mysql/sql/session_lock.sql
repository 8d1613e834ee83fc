-- Takes a session's member lock, at once or not at all.
SELECT GET_LOCK(@name, 0)
