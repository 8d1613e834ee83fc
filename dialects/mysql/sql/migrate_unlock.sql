-- Frees Migrate's lock. Args: lock name.
SELECT RELEASE_LOCK(?)
