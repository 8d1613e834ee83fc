-- Frees the member lock @name session_wait.sql took.
SELECT RELEASE_LOCK(@name)
