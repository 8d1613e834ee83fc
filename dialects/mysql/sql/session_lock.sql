-- Takes a session's member lock, at once or not at all. Args: lock name.
-- Returns 1 when taken.
SELECT GET_LOCK(?, 0)
