-- Takes a session's member lock @name, at once or not at all.
-- Returns 1 when taken.
SELECT GET_LOCK(@name, 0)
