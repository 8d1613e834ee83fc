-- Frees the member lock session_wait.sql took. Args: lock name.
SELECT RELEASE_LOCK(?)
