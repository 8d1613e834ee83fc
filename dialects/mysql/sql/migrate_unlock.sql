-- Frees Migrate's lock @name.
SELECT RELEASE_LOCK(@name)
